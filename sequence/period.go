package sequence

import (
	"fmt"
	"time"

	"github.com/idforge/idforge"
)

// Period is the length of the periods a Counter counts in: the count
// restarts at 1 in every new period. Periods are calendar periods of a
// time zone (CounterSettings.Location): a day runs from 00:00:00 to
// 23:59:59 local time, a month from the 1st to its last day.
type Period uint8

// The periods a Counter can count in.
const (
	Second Period = iota + 1
	Minute
	Hour
	Day
	Month
)

var periodNames = [...]string{Second: "second", Minute: "minute", Hour: "hour", Day: "day", Month: "month"}

// ParsePeriod returns the Period named s ("second", "minute", "hour",
// "day" or "month"), or an error wrapping idforge.ErrInvalidArgument.
func ParsePeriod(s string) (Period, error) {
	for p, name := range periodNames {
		if name != "" && name == s {
			return Period(p), nil
		}
	}
	return 0, fmt.Errorf("%w: period %q (want second, minute, hour, day or month)", idforge.ErrInvalidArgument, s)
}

// String returns the period's name, as ParsePeriod accepts it.
func (p Period) String() string {
	if p.valid() {
		return periodNames[p]
	}
	return fmt.Sprintf("Period(%d)", uint8(p))
}

func (p Period) valid() bool { return p >= Second && p <= Month }

// Stamp returns the period containing t in loc (nil: UTC) as the decimal
// number of its calendar fields, most significant first, down to the
// period's own: 202504 for a month, 20250413 for a day, 2025041312 for an
// hour, 202504131205 for a minute and 20250413120509 for a second. Stamps
// of one period length order like the periods. Years must lie in
// 1000–9999.
func (p Period) Stamp(t time.Time, loc *time.Location) int64 {
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	st := int64(y)*100 + int64(mo)
	for _, f := range []struct {
		from Period
		v    int
	}{{Day, d}, {Hour, h}, {Minute, mi}, {Second, s}} {
		if p > f.from {
			break
		}
		st = st*100 + int64(f.v)
	}
	return st
}

// Start returns the first instant of the period containing t in loc (nil:
// UTC). Where a daylight-saving change repeats a local hour, the two
// occurrences have the same calendar fields, so Start may return either.
func (p Period) Start(t time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	return p.timeOf(p.Stamp(t, loc), loc)
}

// digits is the number of decimal digits of the period's stamps.
func (p Period) digits() int { return 4 + 2*int(Month-p+1) }

// periodOfStamp returns the period whose stamps have st's number of digits.
func periodOfStamp(st int64) (Period, bool) {
	digits := 0
	for v := st; v > 0; v /= 10 {
		digits++
	}
	for p := Second; p <= Month; p++ {
		if p.digits() == digits {
			return p, true
		}
	}
	return 0, false
}

// fields splits a stamp of p into year, month, day, hour, minute, second;
// fields finer than p are zero (day 1 for a month).
func (p Period) fields(st int64) (y, mo, d, h, mi, s int) {
	f := [6]int{0, 1, 1, 0, 0, 0}
	n := 6 - int(p) + 1 // number of fields the stamp carries
	for i := n - 1; i >= 1; i-- {
		f[i] = int(st % 100)
		st /= 100
	}
	f[0] = int(st)
	return f[0], f[1], f[2], f[3], f[4], f[5]
}

// timeOf returns the first instant of the period with stamp st.
func (p Period) timeOf(st int64, loc *time.Location) time.Time {
	y, mo, d, h, mi, s := p.fields(st)
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, loc)
}

// nextStart returns the first instant of the period after the one with
// stamp st.
func (p Period) nextStart(st int64, loc *time.Location) time.Time {
	y, mo, d, h, mi, s := p.fields(st)
	switch p {
	case Second:
		s++
	case Minute:
		mi++
	case Hour:
		h++
	case Day:
		d++
	case Month:
		mo++
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, 0, loc)
}

// Nominal returns the period's usual length: a day is 24 h and a month
// 31 days, whatever daylight saving and the calendar do. Stores use it to
// size how long they keep a period's count.
func (p Period) Nominal() time.Duration {
	switch p {
	case Second:
		return time.Second
	case Minute:
		return time.Minute
	case Hour:
		return time.Hour
	case Day:
		return 24 * time.Hour
	case Month:
		return 31 * 24 * time.Hour
	}
	return 0
}
