package sequence

import (
	"context"
	"fmt"
	"math/bits"
	"strconv"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/dsn"
)

// Packing is how a date-packed number holds a period of a Counter and its
// count, as the Redis order-number scheme packs yyMMddHHmmss and a
// per-second INCR into an int64:
//
//	(250413120000 << 14) | 1  =  4102768558080001   the first number of 2025-04-13 12:00:00
//
// The period's stamp with a two-digit year (yyMMddHHmmss for a second,
// yyMMddHHmm for a minute, yyMMddHH, yyMMdd, yyMM), read as a decimal
// integer, takes the high bits and the count the low Bits, so numbers
// order by period, then count. The stamp's granularity is always the
// counter's period, and the count is at most Cap, 2^Bits − 1 (16,383 a
// second for 14 bits); so as a Counter never returns a (period, count)
// twice, no two numbers are equal. Stamps are calendar fields of
// Location, the counter's zone; the two-digit year holds the years
// 2000–2099, and a period outside them is refused rather than packed.
type Packing struct {
	Period   Period
	Bits     int
	Location *time.Location
}

// MaxPackedBits returns the most count bits a packing of period can have:
// the stamp's largest value (99991231235959 less its century for a
// second) takes the rest of the int64's 63 bits, 23 bits for a second,
// 29 for a minute, 36 for an hour, 43 for a day and 49 for a month.
func MaxPackedBits(p Period) int {
	return 63 - bits.Len64(uint64(p.shortMax()))
}

// shortMax is the largest two-digit-year stamp of p: 10^(digits−2) − 1.
func (p Period) shortMax() int64 {
	m := int64(1)
	for range p.digits() - 2 {
		m *= 10
	}
	return m - 1
}

// Cap returns the largest count a number can hold: 2^Bits − 1.
func (k Packing) Cap() int64 { return int64(1)<<k.Bits - 1 }

// Validate reports whether k can pack numbers: a known period, a zone,
// and 1 to MaxPackedBits(Period) bits. Errors wrap
// idforge.ErrInvalidArgument.
func (k Packing) Validate() error {
	switch {
	case !k.Period.valid():
		return fmt.Errorf("%w: date-packed: period %v", idforge.ErrInvalidArgument, k.Period)
	case k.Location == nil:
		return fmt.Errorf("%w: date-packed: no time zone", idforge.ErrInvalidArgument)
	case k.Bits < 1 || k.Bits > MaxPackedBits(k.Period):
		return fmt.Errorf("%w: date-packed: bits %d out of range 1..%d for a count per %s (the %d-digit stamp takes the rest of 63 bits)",
			idforge.ErrInvalidArgument, k.Bits, MaxPackedBits(k.Period), k.Period, k.Period.digits()-2)
	}
	return nil
}

// Pack returns the number of count n in the period that starts at start.
// It returns an error wrapping idforge.ErrLayoutExpired when the period's
// year is outside 2000–2099, and one wrapping idforge.ErrInvalidArgument
// when n is outside 1..Cap.
func (k Packing) Pack(start time.Time, n int64) (int64, error) {
	if n < 1 || n > k.Cap() {
		return 0, fmt.Errorf("%w: date-packed: count %d out of range 1..%d (%d bits)", idforge.ErrInvalidArgument, n, k.Cap(), k.Bits)
	}
	if y := start.In(k.Location).Year(); y < 2000 || y > 2099 {
		return 0, fmt.Errorf("%w: date-packed numbers hold the years 2000–2099 (two digits), and the period is in %d", idforge.ErrLayoutExpired, y)
	}
	short := k.Period.Stamp(start, k.Location) % (k.Period.shortMax() + 1)
	return short<<k.Bits | n, nil
}

// Unpack returns the start of the period number id was counted in, in
// Location, and its count: Unpack(Pack(start, n)) is (start, n). It
// returns an error wrapping idforge.ErrInvalidArgument when id is not a
// number of this packing: not positive, a count of 0, or a stamp that is
// no period of Location's calendar (a month 13, a local time skipped by
// daylight saving).
func (k Packing) Unpack(id int64) (time.Time, int64, error) {
	short, n := id>>k.Bits, id&k.Cap()
	bad := func(why string) (time.Time, int64, error) {
		return time.Time{}, 0, fmt.Errorf("%w: %d is not a date-packed number of %d bits per %s: %s", idforge.ErrInvalidArgument, id, k.Bits, k.Period, why)
	}
	switch {
	case id <= 0:
		return bad("not positive")
	case n == 0:
		return bad("its count is 0")
	case short > k.Period.shortMax():
		return bad("its stamp has too many digits")
	}
	stamp := 20*(k.Period.shortMax()+1) + short
	start := k.Period.timeOf(stamp, k.Location)
	if k.Period.Stamp(start, k.Location) != stamp {
		return bad(strconv.FormatInt(short, 10) + " is no " + k.Period.String() + " of the calendar in " + k.Location.String())
	}
	return start, n, nil
}

// DatePacked is a source of date-packed numbers (see Packing) drawn from a
// Counter: each number is the counter's next count packed with the
// period it was counted in, so the counter's cap, its over_cap (wait for
// the next period or refuse), its rollback guard and its store's sharing
// across nodes all apply. It is safe for concurrent use.
type DatePacked struct {
	c *Counter
	k Packing
}

var _ Source = (*DatePacked)(nil)

// NewDatePacked returns a source of numbers of bits count bits from c,
// which it then owns (Close closes it). It returns an error wrapping
// idforge.ErrInvalidArgument when bits do not fit c's period (see
// MaxPackedBits) or when c's cap is 0 or above 2^bits − 1: a count that
// does not fit its bits would run into the date's.
func NewDatePacked(c *Counter, bits int) (*DatePacked, error) {
	k := Packing{Period: c.s.Period, Bits: bits, Location: c.loc}
	if err := k.Validate(); err != nil {
		return nil, fmt.Errorf("counter %q: %w", c.s.Name, err)
	}
	if c.s.Cap < 1 || c.s.Cap > k.Cap() {
		return nil, fmt.Errorf("%w: counter %q: cap %d, but %d bits hold counts up to %d: set cap=1..%d",
			idforge.ErrInvalidArgument, c.s.Name, c.s.Cap, bits, k.Cap(), k.Cap())
	}
	return &DatePacked{c: c, k: k}, nil
}

// Packing returns how the source packs its numbers.
func (d *DatePacked) Packing() Packing { return d.k }

// Next returns the next number: the counter's next count in the period
// the clock is in (or a later one; see Counter.Next), packed. Errors are
// the counter's, and one wrapping idforge.ErrLayoutExpired outside the
// years 2000–2099 (the count drawn is a gap).
func (d *DatePacked) Next(ctx context.Context) (int64, error) {
	n, start, err := d.c.Next(ctx, time.Time{})
	if err != nil {
		return 0, err
	}
	return d.k.Pack(start, n)
}

// Close closes the counter.
func (d *DatePacked) Close() error { return d.c.Close() }

// ParsePacking returns the Packing of the date-packed source counterURL
// (a counter URL, as OpenCounter reads it) and bits would open, reading
// only the URL: for explaining numbers without opening anything. The URL
// must name its zone (tz=): the packed date is local time there. Errors
// wrap idforge.ErrInvalidArgument.
func ParsePacking(counterURL string, bits int) (Packing, error) {
	u, err := dsn.Parse(counterURL, "date-packed counter URL")
	if err != nil {
		return Packing{}, err
	}
	q := u.Query()
	if !q.Has("tz") {
		return Packing{}, fmt.Errorf("%w: date-packed counter URL: give tz= (an IANA zone such as Asia/Shanghai, or UTC): the packed date is local time there", idforge.ErrInvalidArgument)
	}
	k := Packing{Bits: bits}
	if k.Period, err = ParsePeriod(q.Get("period")); err != nil {
		return Packing{}, err
	}
	if k.Location, err = time.LoadLocation(q.Get("tz")); err != nil {
		return Packing{}, fmt.Errorf("%w: date-packed counter URL: tz %q: %v", idforge.ErrInvalidArgument, q.Get("tz"), err)
	}
	return k, k.Validate()
}

// OpenDatePacked opens a date-packed source over the counter counterURL
// names (see OpenCounter; it must give tz=) with bits count bits. When
// the URL gives no cap, the cap is 2^bits − 1; a larger one, or 0, is
// refused. Errors are ParsePacking's, OpenCounter's and NewDatePacked's.
func OpenDatePacked(ctx context.Context, counterURL string, bits int) (*DatePacked, error) {
	k, err := ParsePacking(counterURL, bits)
	if err != nil {
		return nil, err
	}
	u, _ := dsn.Parse(counterURL, "") // ParsePacking parsed it
	if q := u.Query(); !q.Has("cap") {
		q.Set("cap", strconv.FormatInt(k.Cap(), 10))
		u.RawQuery = q.Encode()
	}
	c, err := OpenCounter(ctx, u.String())
	if err != nil {
		return nil, err
	}
	d, err := NewDatePacked(c, bits)
	if err != nil {
		c.Close()
		return nil, err
	}
	return d, nil
}
