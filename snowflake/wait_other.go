//go:build !linux

package snowflake

import "time"

// fineSleep sleeps for about d. Outside Linux it is time.Sleep; the spin
// that follows in preciseSleep absorbs any overshoot below spinMargin.
func fineSleep(d time.Duration) { time.Sleep(d) }
