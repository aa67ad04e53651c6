package snowflake

import (
	"syscall"
	"time"
)

// fineSleep blocks the calling thread in nanosleep(2) for about d (plus
// the kernel's timer slack), bypassing the runtime's millisecond timer
// resolution.
func fineSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var left syscall.Timespec
		err := syscall.Nanosleep(&ts, &left)
		if err != syscall.EINTR {
			return
		}
		ts = left
	}
}
