package serial_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/idforge/idforge/serial"
)

// fixedClock is an idforge.Clock stopped at one instant.
type fixedClock time.Time

func (c fixedClock) Now() time.Time      { return time.Time(c) }
func (fixedClock) Sleep(d time.Duration) {}

// counter is an in-memory idforge.Generator; a real template resolves a
// segment or snowflake key, or a Redis INCR.
type counter struct{ n atomic.Int64 }

func (c *counter) Next(context.Context) (int64, error) { return c.n.Add(1), nil }

func ExampleParse() {
	sn := &counter{}
	sn.n.Store(122)
	tp, err := serial.Parse(context.Background(), "SN-@{seq:sn,width=6}-@{checksum:mod,of=seq}", serial.Options{
		Resolver: serial.Sources{"sn": {Generator: sn}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		s, err := tp.Next(context.Background(), nil)
		fmt.Println(s, err)
	}
	fmt.Println("max length:", tp.MaxLen())
	// Output:
	// SN-000123-2 <nil>
	// SN-000124-0 <nil>
	// max length: 11
}

func ExampleTemplate_Next_params() {
	tp, err := serial.Parse(context.Background(), "@{param:area,chars=digits}-@{param:unit,width=4}-@{seq:unit-jobs,width=5}", serial.Options{
		Resolver: serial.Sources{"unit-jobs": {Generator: &counter{}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tp.Params())
	fmt.Println(tp.Next(context.Background(), map[string]string{"area": "010", "unit": "6541"}))
	fmt.Println(tp.Next(context.Background(), map[string]string{"area": "010", "unit": "65"}))
	// Output:
	// [area unit]
	// 010-6541-00001 <nil>
	//  idforge: invalid argument: serial: parameter "unit" is 2 characters long, want 4
}

func ExampleParse_syntaxError() {
	_, err := serial.Parse(context.Background(), "@{date:yyyyMMdd}@{seq:order,widht=5}", serial.Options{})
	fmt.Println(err)
	// Output:
	// serial: col 29: seq takes no option "widht" (options: [width pad by])
}

// weekday renders the ISO day of the week, 1 (Monday) to 7 (Sunday), of
// the evaluation's time in the template's zone.
type weekday struct{}

func (weekday) MaxLen() int { return 1 }

func (weekday) Append(_ context.Context, dst []byte, ev *serial.Eval) ([]byte, error) {
	d := ev.Time().In(ev.Location()).Weekday()
	if d == time.Sunday {
		d = 7
	}
	return append(dst, byte('0'+d)), nil
}

func init() {
	serial.RegisterKind("weekday", serial.KindFunc(func(e serial.Expr) (serial.Part, error) {
		if e.Arg != "" {
			return nil, &serial.SyntaxError{Col: e.ArgCol, Msg: "weekday takes no argument"}
		}
		return weekday{}, e.OnlyOptions()
	}))
}

func ExampleRegisterKind() {
	tp, err := serial.Parse(context.Background(), "W@{date:yyyyMMdd}-@{weekday}@{seq:order,width=4}", serial.Options{
		Clock:    fixedClock(time.Date(2017, 3, 4, 10, 0, 0, 0, time.UTC)), // a Saturday
		Resolver: serial.Sources{"order": {Generator: &counter{}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tp.Next(context.Background(), nil))
	fmt.Println(tp.MaxLen())
	_, err = serial.Parse(context.Background(), "@{weekday:mon}", serial.Options{})
	fmt.Println(err)
	// Output:
	// W20170304-60001 <nil>
	// 15
	// serial: col 11: weekday takes no argument
}

func ExampleTemplate_Explain() {
	tp, err := serial.Parse(context.Background(), "@{checksum:luhn,of=seq}@{date:yyyyMMdd}@{seq:order,width=8}", serial.Options{
		Resolver: serial.Sources{"order": {Generator: &counter{}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(tp.Explain())
	// Output:
	// template: @{checksum:luhn,of=seq}@{date:yyyyMMdd}@{seq:order,width=8}
	// max length: 17
	// evaluation order: #2 #0 #1
	// unique by: #2 seq:order, a counter every serial shows
	// #  col  kind      argument           options  max  names       refers to
	// 0  1    checksum  luhn               of=seq   1    checksum    seq
	// 1  24   date      yyyyMMdd           -        8    date        -
	// 2  40   seq       order (generator)  width=8  8    order, seq  -
}
