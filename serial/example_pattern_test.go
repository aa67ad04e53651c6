package serial_test

import (
	"context"
	"fmt"

	"github.com/idforge/idforge/serial"
)

// Pattern checks a value against a template's shape: here one the
// template rendered, one with a digit too few, and one of another
// template.
func ExampleTemplate_Pattern() {
	tp, err := serial.Parse(context.Background(), "SN-@{seq:sn,width=6}-@{checksum:mod,of=seq}", serial.Options{
		Resolver: serial.Sources{"sn": {Generator: &counter{}}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, _ := tp.Next(context.Background(), nil)
	re := tp.Pattern()
	for _, v := range []string{s, "SN-00001-2", "QJ000001"} {
		fmt.Println(v, re.MatchString(v))
	}
	// Output:
	// SN-000001-9 true
	// SN-00001-2 false
	// QJ000001 false
}
