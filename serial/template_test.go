package serial

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idforge/idforge"
	"github.com/idforge/idforge/internal/fakeclock"
)

// TestBusinessExamples renders the serial numbers of JD's logistics
// serial-number platform and of the Redis per-second scheme exactly,
// with a fixed clock and fake sources.
func TestBusinessExamples(t *testing.T) {
	// JD's check digit for 123: 123*9 = 1107, 1107 = 35*31 + 22,
	// 22 % 10 = 2.
	if got := 123 * 9 % 31 % 10; got != 2 {
		t.Fatalf("123*9%%31%%10 = %d, want 2", got)
	}
	tests := []struct {
		name     string
		template string
		clock    *fakeclock.Clock
		sources  Sources
		params   map[string]string
		want     []string // consecutive serials
		maxLen   int
	}{{
		name:     "date and per-day counter",
		template: "@{date:yyyyMMdd}@{seq:order,width=5}",
		clock:    clockAt(2017, 3, 4, 10, 30, 0),
		sources:  Sources{"order": {Counter: newCounter(24*time.Hour, time.UTC)}},
		want:     []string{"2017030400001", "2017030400002"},
		maxLen:   13,
	}, {
		name:     "area, unit and the unit's job number",
		template: "@{param:area}-@{param:unit,width=4}-@{seq:unit-jobs,width=5}",
		clock:    clockAt(2017, 3, 4, 10, 30, 0),
		sources:  Sources{"unit-jobs": {Generator: newGen(1)}},
		params:   map[string]string{"area": "010", "unit": "6541"},
		want:     []string{"010-6541-00001", "010-6541-00002"},
		maxLen:   defaultParamMax + 1 + 4 + 1 + 5,
	}, {
		name:     "prefix and sequence",
		template: "QJ@{seq:qj,width=6}",
		clock:    clockAt(2017, 3, 4, 10, 30, 0),
		sources:  Sources{"qj": {Generator: newGen(1)}},
		want:     []string{"QJ000001", "QJ000002"},
		maxLen:   8,
	}, {
		name:     "sequence with JD's check digit",
		template: "SN-@{seq:sn,width=6}-@{checksum:mod,of=seq}",
		clock:    clockAt(2017, 3, 4, 10, 30, 0),
		sources:  Sources{"sn": {Generator: newGen(123)}},
		// 124*9 = 1116 = 36*31 + 0 → 0.
		want:   []string{"SN-000123-2", "SN-000124-0"},
		maxLen: 11,
	}, {
		name:     "second stamp and per-second counter",
		template: "@{date:yyMMddHHmmss}@{seq:persec,width=4}",
		clock:    clockAt(2025, 4, 13, 12, 0, 0),
		sources:  Sources{"persec": {Counter: newCounter(time.Second, time.UTC)}},
		want:     []string{"2504131200000001", "2504131200000002", "2504131200000003"},
		maxLen:   16,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tp := mustParse(t, tc.template, Options{Clock: tc.clock, Resolver: tc.sources})
			if got := tp.MaxLen(); got != tc.maxLen {
				t.Errorf("MaxLen = %d, want %d", got, tc.maxLen)
			}
			for i, want := range tc.want {
				got := mustNext(t, tp, tc.params)
				if got != want {
					t.Errorf("serial %d = %q, want %q", i+1, got, want)
				}
				if len(got) > tp.MaxLen() {
					t.Errorf("serial %q is longer than MaxLen %d", got, tp.MaxLen())
				}
			}
		})
	}
}

func TestSeqWidth(t *testing.T) {
	ctx := context.Background()
	g := newGen(98)
	tp := mustParse(t, "A@{seq:s,width=2}", Options{Resolver: Sources{"s": {Generator: g}}})
	for _, want := range []string{"A98", "A99"} {
		if got := mustNext(t, tp, nil); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	_, err := tp.Next(ctx, nil)
	wantErr(t, err, idforge.ErrSpaceExhausted, `"s"`, "100", "width=2", "up to 99")

	tp = mustParse(t, "@{seq:s,width=5,pad=x}|@{seq:t}", Options{Resolver: Sources{"s": {Generator: newGen(42)}, "t": {Generator: newGen(9223372036854775807)}}})
	if got, want := mustNext(t, tp, nil), "xxx42|9223372036854775807"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if tp.MaxLen() != 5+1+19 {
		t.Fatalf("MaxLen = %d, want 25", tp.MaxLen())
	}

	tp = mustParse(t, "@{seq:neg}", Options{Resolver: Sources{"neg": {Generator: newGen(-1)}}})
	_, err = tp.Next(ctx, nil)
	wantErr(t, err, nil, "negative")

	boom := errors.New("store down")
	tp = mustParse(t, "@{seq:down}", Options{Resolver: Sources{"down": {Generator: errGen{fmt.Errorf("%w: %w", idforge.ErrUnavailable, boom)}}}})
	_, err = tp.Next(ctx, nil)
	wantErr(t, err, idforge.ErrUnavailable, `seq "down"`)
	if !errors.Is(err, boom) {
		t.Fatalf("%v does not wrap the source's error", err)
	}
}

func TestParams(t *testing.T) {
	g := newGen(1)
	tp := mustParse(t, "@{param:area,chars=digits,max=4}-@{param:unit,width=4}-@{param:shop,width=3,pad=0,chars=digits}-@{seq:s}",
		Options{Resolver: Sources{"s": {Generator: g}}})
	if got, want := tp.Params(), []string{"area", "unit", "shop"}; !slices.Equal(got, want) {
		t.Fatalf("Params = %v, want %v", got, want)
	}
	ok := map[string]string{"area": "010", "unit": "AB-_", "shop": "7", "unused": "x"}
	if got, want := mustNext(t, tp, ok), "010-AB-_-007-1"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{"area": "010", "unit": "6541", "shop": "12"}
		if v == "<missing>" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	bad := []struct {
		params map[string]string
		msg    string
	}{
		{with("area", "<missing>"), `"area" is missing`},
		{with("area", ""), `"area" is empty`},
		{with("area", "01a"), `"area": character 3 'a' (U+0061) is not in chars=digits`},
		{with("area", "01234"), `"area" is 5 characters long, at most 4`},
		{with("unit", "654"), `"unit" is 3 characters long, want 4`},
		{with("unit", "65410"), `"unit" is 5 characters long, want 4`},
		{with("unit", "65 1"), `"unit": character 3 ' ' (U+0020) is not in chars=safe`},
		// Not ASCII: the character is named, not the bytes it takes.
		{with("unit", "6é41"), `"unit": character 2 'é' (U+00E9) is not in chars=safe`},
		{with("area", "é"), `"area": character 1 'é' (U+00E9) is not in chars=digits`},
		{with("area", "订单"), `"area": character 1 '订' (U+8BA2) is not in chars=digits`},
		{with("area", "0\xe8"), `"area": character 2 (byte 0xE8, which is not UTF-8) is not in chars=digits`},
		{with("shop", "1234"), `"shop" is 4 characters long, at most 3`},
		{nil, `"area" is missing`},
	}
	for _, tc := range bad {
		_, err := tp.Next(context.Background(), tc.params)
		wantErr(t, err, idforge.ErrInvalidArgument, tc.msg)
		_, err = tp.NextN(context.Background(), 3, tc.params)
		wantErr(t, err, idforge.ErrInvalidArgument, tc.msg)
	}
	if n := g.calls.Load(); n != 1 {
		t.Fatalf("the generator was called %d times; a bad parameter must not use up numbers", n)
	}
}

// TestSyntaxErrors checks that every refused template gets a *SyntaxError
// naming the right column and wrapping ErrInvalidArgument.
func TestSyntaxErrors(t *testing.T) {
	sources := Sources{"order": {Generator: newGen(1)}, "o2": {Generator: newGen(1)}, "ctr": {Counter: newCounter(time.Second, time.UTC)}, "odd": {Generator: newGen(1), Counter: newCounter(time.Second, time.UTC)}}
	tests := []struct {
		template string
		col      int
		msg      string
	}{
		{"", 1, "empty template"},
		{"AB\x01", 3, "control character"},
		{"AB\xff", 3, "invalid UTF-8"},
		{"@{", 3, "not closed"},
		{"ab@{seq:order", 14, "expression at col 3 not closed"},
		{"ab@{seq:order,width=5", 22, "not closed"},
		{"@{}", 3, "expected a kind name"},
		{"@{ :x}", 4, "expected a kind name"},
		{"@{9x}", 3, `invalid kind name "9x"`},
		{"@{seq:order;width=5}", 7, "seq:order;width=5: a name is"},
		{"@{seq:order width=5}", 7, "seq:order width=5: a name is"},
		{"@{seq:order,}", 13, "expected an option name"},
		{"@{seq:order, 5=1}", 14, "expected an option name"},
		{"@{seq:order,width}", 18, "expected '=' after option \"width\""},
		{"@{seq:order,width=}", 19, `option "width" has no value`},
		{"@{seq:order,width=5,width=6}", 21, `option "width" given twice`},
		{"@{nope:x}", 3, `unknown kind "nope"`},
		{"xy@{ nope }", 6, `unknown kind "nope"`},
		{"@{date}", 7, "date needs a layout"},
		{"@{date:yyyyMMddQ}", 16, "unknown pattern letter 'Q'"},
		{"@{date:YYYY}", 8, "week year"},
		{"@{date:yyy}", 8, "yyy: write yyyy or yy"},
		{"@{date:yyyyMMM}", 12, "MMM: write MM or M"},
		{"@{date:SSSSSSSSSS}", 8, "at most 9 S"},
		{"@{date:yyyy'T}", 12, "quote not closed"},
		{"@{date:yyyy,tz=Mars/Olympus}", 16, "unknown time zone"},
		{"@{date:yyyy,tz=+25:00}", 16, "unknown time zone"},
		{"@{date:yyyy,fmt=1}", 13, `date takes no option "fmt"`},
		{"@{seq}", 6, "seq needs a generator name"},
		{"@{seq:bad name}", 7, "a name is 1 to 128"},
		{"@{seq:missing}", 7, "seq:missing"},
		{"@{seq:odd}", 7, "returned both"},
		{"@{seq:order,width=0}", 19, "at least 1"},
		{"@{seq:order,width=256}", 19, "at most 255"},
		{"@{seq:order,width=5x}", 20, "want a number"},
		{"@{seq:order,pad=x}", 13, "pad= needs width="},
		{"@{seq:order,width=4,pad=xy}", 25, "one printable ASCII character"},
		{"@{seq:order,chars=digits}", 13, `seq takes no option "chars"`},
		{"@{param}", 8, "param needs a parameter name"},
		{"@{param:a,width=2,max=3}", 19, "exclude each other"},
		{"@{param:a,chars=greek}", 17, "unknown set"},
		{"@{param:a,width=3,pad=x,chars=digits}", 23, "pad=x is not in chars=digits"},
		{"@{param:a,max=0}", 15, "at least 1"},
		{"@{checksum}", 11, "checksum needs an algorithm"},
		{"@{checksum:crc}", 12, "unknown algorithm"},
		{"@{checksum:luhn}", 1, "there is none"},
		{"@{seq:order}@{checksum:luhn,of=nope}", 32, `no part is named "nope"`},
		{"@{seq:order}@{seq:o2}@{checksum:luhn,of=seq}", 41, `"seq" names the parts at cols 1 and 13`},
		{"@{seq:order}@{checksum:luhn,of=checksum}", 32, "checksum refers to itself"},
		{"@{param:area}@{checksum:luhn,of=area}", 33, "of=area: the param part at col 1 can render other characters than digits; add chars=digits"},
		{"@{date:yyyy-MM}@{checksum:luhn,of=date}", 35, "of=date: the date part at col 1 can render"},
		{"@{seq:order,width=4,pad=_}@{checksum:luhn,of=seq}", 46, "of=seq: the seq part"},
		{"@{random:4,chars=hex}@{checksum:mod,of=random}", 40, "of=random"},
		{"@{seq:order}@{checksum:iso7064,as=c}@{checksum:mod,of=c}", 55, "of=c: the checksum part at col 13"},
		{"@{checksum:luhn,of=b,as=a}@{checksum:luhn,of=a,as=b}", 20, "reference cycle: a → b → a"},
		{"@{seq:order}@{checksum:luhn,of=x,as=a}@{checksum:mod,of=a,as=b}@{checksum:mod,of=b,as=x}", 32, "reference cycle"},
		{"@{seq:order,as=o}@{seq:o2,as=o}", 30, "as=o: the seq part at col 1 has that name too"},
		{"@{param:order}@{seq:o2,as=order}", 27, "as=order: the param part at col 1"},
		{"@{seq:o2,as=order}@{param:order}", 13, "as=order: the param part at col 19"},
		{"@{seq:o2}@{seq:order}@{param:x,as=seq}", 35, "as=seq: the seq part at col 1"},
		{"@{seq:order,as=all}", 16, `not "all"`},
		{"@{random}", 9, "random needs a length"},
		{"@{random:0}", 10, "at least 1"},
		{"@{random:4,chars=emoji}", 18, "unknown set"},
		{"@{date:'a,b'}@{param:x,as='q'}", 27, "as='q'"},
		// A checksum over text that need not have a digit: it would fail
		// after its serial's numbers were drawn.
		{"ab@{checksum:luhn}@{seq:order}", 3, "checksum:luhn sums the digits of the text before it, which need not have any"},
		{"@{random:4,chars=alnum}@{checksum:mod}@{seq:order}", 24, "need not have any"},
		{"@{date:'Q'}@{checksum:iso7064}@{checksum:mod}@{seq:order}", 12, "need not have any"},
	}
	for _, tc := range tests {
		t.Run(tc.template, func(t *testing.T) {
			_, err := Parse(context.Background(), tc.template, Options{Resolver: sources})
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a *SyntaxError", tc.template, err)
			}
			if se.Col != tc.col {
				t.Errorf("Parse(%q): col %d, want %d (%v)", tc.template, se.Col, tc.col, err)
			}
			if !errors.Is(err, idforge.ErrInvalidArgument) {
				t.Errorf("error %v does not wrap ErrInvalidArgument", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			if want := fmt.Sprintf("serial: col %d: ", tc.col); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
		})
	}
}

func TestResolver(t *testing.T) {
	_, err := Parse(context.Background(), "@{seq:missing}", Options{Resolver: Sources{}})
	wantErr(t, err, idforge.ErrUnknownKey, `"missing"`)
	wantErr(t, err, idforge.ErrInvalidArgument)

	_, err = Parse(context.Background(), "X@{seq:order}", Options{})
	wantErr(t, err, idforge.ErrInvalidArgument, "col 8", "no Resolver")

	var asked []string
	r := ResolverFunc(func(_ context.Context, name string) (Source, error) {
		asked = append(asked, name)
		return Source{Generator: newGen(1)}, nil
	})
	tp := mustParse(t, "@{seq:a}-@{seq:b}", Options{Resolver: r})
	if !slices.Equal(asked, []string{"a", "b"}) {
		t.Fatalf("resolved %v, want [a b]", asked)
	}
	if got := mustNext(t, tp, nil); got != "1-1" {
		t.Fatalf("got %q", got)
	}
	_, err = Parse(context.Background(), "@{seq:a}", Options{Resolver: ResolverFunc(func(context.Context, string) (Source, error) { return Source{}, nil })})
	wantErr(t, err, idforge.ErrInvalidArgument, "returned <nil>")
}

// Parse hands its own context to the Resolver, which may look a name up
// in a store: a request's deadline and cancellation reach that lookup.
func TestResolverGetsParseContext(t *testing.T) {
	type requestKey struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), requestKey{}, "request"))
	var seen any
	r := ResolverFunc(func(ctx context.Context, name string) (Source, error) {
		seen = ctx.Value(requestKey{})
		if err := ctx.Err(); err != nil {
			return Source{}, err
		}
		return Source{Generator: newGen(1)}, nil
	})
	if _, err := Parse(ctx, "@{seq:a}", Options{Resolver: r}); err != nil || seen != "request" {
		t.Fatalf("Parse: %v; the Resolver saw %v, want the caller's context", err, seen)
	}
	cancel()
	_, err := Parse(ctx, "@{seq:a}", Options{Resolver: r})
	wantErr(t, err, context.Canceled)
	wantErr(t, err, idforge.ErrInvalidArgument, "seq:a")
}

func TestMaxLenOption(t *testing.T) {
	src := Sources{"s": {Generator: newGen(1)}}
	tp := mustParse(t, "QJ@{seq:s,width=6}", Options{Resolver: src, MaxLen: 8})
	if tp.MaxLen() != 8 {
		t.Fatalf("MaxLen = %d", tp.MaxLen())
	}
	_, err := Parse(context.Background(), "QJ@{seq:s,width=6}X", Options{Resolver: src, MaxLen: 8})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Col != 19 || !strings.Contains(se.Msg, "9 bytes long, more than the maximum of 8") {
		t.Fatalf("got %v, want a col 19 error about 9 > 8 bytes", err)
	}
	// A seq without width counts as 19 digits.
	_, err = Parse(context.Background(), "QJ@{seq:s}", Options{Resolver: src, MaxLen: 20})
	wantErr(t, err, idforge.ErrInvalidArgument, "col 3", "21 bytes")
	// Multi-byte static text counts in bytes.
	tp = mustParse(t, "京@{seq:s,width=2}@@", Options{Resolver: src})
	if got := mustNext(t, tp, nil); got != "京01@" || tp.MaxLen() != len(got) {
		t.Fatalf("got %q (MaxLen %d)", got, tp.MaxLen())
	}
}

func TestStaticText(t *testing.T) {
	tests := map[string]string{
		"QJ":                 "QJ",
		"a@b":                "a@b",
		"a@@b":               "a@b",
		"@@{date:yyyy}":      "@{date:yyyy}",
		"@@@{date:yyyy}":     "@2017",
		"mail@":              "mail@",
		"}{":                 "}{",
		"@{ date : yyyy }-x": "2017-x",
		"单号@{date:yyyy}":     "单号2017",
	}
	for text, want := range tests {
		tp := parseCounted(t, text, Options{Clock: clockAt(2017, 3, 4, 0, 0, 0)})
		if got := nextCounted(t, tp, nil); got != want {
			t.Errorf("%q rendered %q, want %q", text, got, want)
		}
		if tp.String() != text+counterSuffix {
			t.Errorf("String() = %q, want %q", tp.String(), text)
		}
	}
}

func TestDateLayouts(t *testing.T) {
	at := time.Date(2017, 3, 4, 5, 6, 7, 89_123_456, time.UTC)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	tests := []struct {
		layout string
		loc    *time.Location
		want   string
		max    int
	}{
		{"yyyyMMdd", nil, "20170304", 8},
		{"yyMMddHHmmss", nil, "170304050607", 12},
		{"yyyy-MM-dd'T'HH:mm:ss.SSS", nil, "2017-03-04T05:06:07.089", 23},
		{"y'y'yy", nil, "", 0}, // refused: a single y
		{"yy'''s'", nil, "17's", 4},
		{"M/d H:m:s", nil, "3/4 5:6:7", 14},
		{"hh h", nil, "05 5", 5},
		{"DDD D", nil, "063 63", 7},
		{"S SS SSSSSSSSS", nil, "0 08 089123456", 14},
		{"yyyyMMddHH", shanghai, "2017030413", 10},
		{"yyyyMMddHH,tz=UTC", shanghai, "2017030405", 10},
		{"yyyyMMddHH,tz=Asia/Shanghai", nil, "2017030413", 10},
		{"HHmm,tz=+05:30", nil, "1036", 4},
		{"HHmm,tz=-0100", nil, "0406", 4},
		{"HH,tz=-01", nil, "04", 2},
		{"'年'", nil, "年", 3},
	}
	for _, tc := range tests {
		text := "@{date:" + tc.layout + "}"
		if tc.want == "" {
			if _, err := Parse(context.Background(), text, Options{Clock: fakeclock.New(at), Location: tc.loc}); err == nil {
				t.Errorf("%q: parsed, want an error", tc.layout)
			}
			continue
		}
		tp, err := Parse(context.Background(), text+counterSuffix, Options{Clock: fakeclock.New(at), Location: tc.loc, Resolver: Sources{"test-counter": {Generator: newGen(1)}}})
		if tc.want == "" {
			if err == nil {
				t.Errorf("%q: parsed, want an error", tc.layout)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.layout, err)
			continue
		}
		if got := nextCounted(t, tp, nil); got != tc.want {
			t.Errorf("%q rendered %q, want %q", tc.layout, got, tc.want)
		}
		if got := tp.MaxLen() - counterSuffixLen; got != tc.max {
			t.Errorf("%q: MaxLen %d, want %d", tc.layout, got, tc.max)
		}
	}
	// Noon and midnight on the 12-hour clock.
	for hour, want := range map[int]string{0: "12", 12: "12", 13: "01"} {
		tp := parseCounted(t, "@{date:hh}", Options{Clock: clockAt(2017, 3, 4, hour, 0, 0)})
		if got := nextCounted(t, tp, nil); got != want {
			t.Errorf("hh at %d:00 = %q, want %q", hour, got, want)
		}
	}
	// Years without four digits are refused, not rendered longer.
	tp := parseCounted(t, "@{date:yy}", Options{Clock: fakeclock.New(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))})
	if _, err := tp.Next(context.Background(), nil); err == nil {
		t.Fatal("year 10000 rendered")
	}
}

func TestChecksums(t *testing.T) {
	tests := []struct {
		algo, digits string
		want         byte
	}{
		{"mod", "123", '2'},
		{"mod", "000123", '2'},
		{"mod", "31", '0'},
		{"mod", "1", '9'}, // 9 % 31 % 10
		{"mod", "99999999999999999999999999", byte('0' + (99999999999999999999999999%31)*9%31%10)},
		{"luhn", "7992739871", '3'},      // the textbook example
		{"luhn", "453201511283036", '6'}, // a Visa test number: 4532015112830366
		{"luhn", "0", '0'},
		{"iso7064", "000000021825009", '7'}, // ORCID 0000-0002-1825-0097
		{"iso7064", "000000015109370", '0'}, // ORCID 0000-0001-5109-3700
		{"iso7064", "000000021694233", 'X'}, // ORCID 0000-0002-1694-233X
	}
	for _, tc := range tests {
		if got := checkDigit(tc.algo, []byte(tc.digits)); got != tc.want {
			t.Errorf("%s(%s) = %c, want %c", tc.algo, tc.digits, got, tc.want)
		}
	}

	ctx := context.Background()
	tp := mustParse(t, "CN@{date:yyyyMMdd}-@{seq:s,width=4}@{checksum:luhn}", Options{Clock: clockAt(2017, 3, 4, 0, 0, 0), Resolver: Sources{"s": {Generator: newGen(1)}}})
	// of=all: the digits 201703040001.
	if got, want := mustNext(t, tp, nil), fmt.Sprintf("CN20170304-0001%c", checkDigit("luhn", []byte("201703040001"))); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	tp = parseCounted(t, "@{param:p,chars=digits}@{checksum:iso7064,of=p}", Options{})
	if got := nextCounted(t, tp, map[string]string{"p": "000000021694233"}); got != "000000021694233X" {
		t.Fatalf("got %q", got)
	}
	// A custom part is checked when it renders.
	tp = parseCounted(t, "@{param:p,as=q}@{test.mirror:q,as=m}@{checksum:luhn,of=m}", Options{})
	_, err := tp.Next(ctx, map[string]string{"p": "12a"})
	wantErr(t, err, idforge.ErrInvalidArgument, "not a digit")
	// Digits that only a parameter gives are checked before any number
	// is drawn: a request whose values have none uses up nothing.
	g := newGen(1)
	tp = mustParse(t, "@{param:p}@{checksum:luhn}-@{seq:s,width=3}", Options{Resolver: Sources{"s": {Generator: g}}})
	for _, p := range []string{"ab", "x-y"} {
		_, err = tp.Next(ctx, map[string]string{"p": p})
		wantErr(t, err, idforge.ErrInvalidArgument, "checksum at col 11", "has no digits", fmt.Sprintf(`parameter "p" is %q`, p))
		_, err = tp.NextN(ctx, 3, map[string]string{"p": p})
		wantErr(t, err, idforge.ErrInvalidArgument, "has no digits")
	}
	if got := mustNext(t, tp, map[string]string{"p": "a7"}); got != fmt.Sprintf("a7%c-001", checkDigit("luhn", []byte("7"))) {
		t.Fatalf("got %q: the refusals used up numbers, or the checksum is wrong", got)
	}
	// With two parameters, a digit in either will do.
	tp = mustParse(t, "@{param:a}-@{param:b}@{checksum:mod}-@{seq:s,width=3}", Options{Resolver: Sources{"s": {Generator: newGen(1)}}})
	_, err = tp.Next(ctx, map[string]string{"a": "x", "b": "y"})
	wantErr(t, err, idforge.ErrInvalidArgument, `parameter "a" is "x", parameter "b" is "y"`)
	if got := mustNext(t, tp, map[string]string{"a": "x", "b": "y2"}); got != fmt.Sprintf("x-y2%c-001", checkDigit("mod", []byte("2"))) {
		t.Fatalf("got %q", got)
	}
}

func TestRandom(t *testing.T) {
	tp := parseCounted(t, "R@{random:12}-@{random:40,chars=crockford}", Options{})
	if tp.MaxLen() != 1+12+1+40+counterSuffixLen {
		t.Fatalf("MaxLen = %d", tp.MaxLen())
	}
	seen := map[string]bool{}
	for range 100 {
		s := nextCounted(t, tp, nil)
		if len(s) != tp.MaxLen()-counterSuffixLen || s[0] != 'R' || s[13] != '-' {
			t.Fatalf("bad shape %q", s)
		}
		for _, c := range []byte(s[1:13]) {
			if !isDigit(c) {
				t.Fatalf("%q: %q is not a digit", s, c)
			}
		}
		for _, c := range []byte(s[14:]) {
			if !charSets["crockford"].has[c] {
				t.Fatalf("%q: %q is not Crockford base 32", s, c)
			}
		}
		seen[s] = true
	}
	if len(seen) < 100 {
		t.Fatalf("only %d different random serials in 100", len(seen))
	}
}

// TestEvaluationOrder checks that a checksum is computed after the part
// it covers wherever it stands in the text, and that parameters and
// sources come before everything else.
func TestEvaluationOrder(t *testing.T) {
	for _, text := range []string{
		"SN-@{seq:sn,width=6}-@{checksum:mod,of=seq}",
		"@{checksum:mod,of=seq}-SN-@{seq:sn,width=6}",
		"@{checksum:mod,of=n}-SN-@{seq:sn,width=6,as=n}",
	} {
		tp := mustParse(t, text, Options{Resolver: Sources{"sn": {Generator: newGen(123)}}})
		got := mustNext(t, tp, nil)
		if !strings.Contains(got, "SN-000123") || !strings.Contains(got, "2") || len(got) != 11 {
			t.Errorf("%q rendered %q", text, got)
		}
		x := tp.Explain()
		seqAt := slices.IndexFunc(x.Parts, func(p PartInfo) bool { return p.Kind == "seq" })
		sumAt := slices.IndexFunc(x.Parts, func(p PartInfo) bool { return p.Kind == "checksum" })
		if !slices.Equal(x.Order, []int{seqAt, sumAt}) {
			t.Errorf("%q: order %v, want [%d %d]", text, x.Order, seqAt, sumAt)
		}
	}
	if got := mustNext(t, mustParse(t, "@{checksum:mod,of=seq}-SN-@{seq:sn,width=6}", Options{Resolver: Sources{"sn": {Generator: newGen(123)}}}), nil); got != "2-SN-000123" {
		t.Fatalf("got %q", got)
	}

	// A chain: c2 covers c1, which covers the param; text order is the
	// reverse.
	tp := mustParse(t, "@{checksum:luhn,of=c1,as=c2}@{checksum:luhn,of=p,as=c1}@{date:yyyy}@{param:p,chars=digits}@{seq:s,width=1}",
		Options{Resolver: Sources{"s": {Generator: newGen(5)}}, Clock: clockAt(2017, 3, 4, 0, 0, 0)})
	if got, want := tp.Explain().Order, []int{3, 4, 1, 0, 2}; !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	c1 := checkDigit("luhn", []byte("7992739871"))
	c2 := checkDigit("luhn", []byte{c1})
	if got, want := mustNext(t, tp, map[string]string{"p": "7992739871"}), string([]byte{c2, c1})+"201779927398715"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestNames(t *testing.T) {
	src := Sources{"a": {Generator: newGen(11)}, "b": {Generator: newGen(22)}}
	tp := mustParse(t, "@{seq:a,width=2}@{seq:b,width=2,as=second}@{checksum:mod,of=a}@{checksum:mod,of=second,as=k2}@{param:p}", Options{Resolver: src})
	x := tp.Explain()
	want := [][]string{{"a"}, {"second", "b"}, {}, {"k2"}, {"p", "param"}}
	for i, p := range x.Parts {
		if !slices.Equal(p.Names, want[i]) && !(len(p.Names) == 0 && len(want[i]) == 0) {
			t.Errorf("part %d names %v, want %v", i, p.Names, want[i])
		}
	}
	if got := mustNext(t, tp, map[string]string{"p": "x"}); got != "1122"+string(checkDigit("mod", []byte("11")))+string(checkDigit("mod", []byte("22")))+"x" {
		t.Fatalf("got %q", got)
	}
	// Two parts sharing a name are fine until something refers to it.
	parseCounted(t, "@{param:p}@{param:p}", Options{})
}

func TestExplain(t *testing.T) {
	tp := mustParse(t, "SN-@{seq:sn,width=6}-@{checksum:mod,of=sn}@{seq:c,as=n}@{seq:b}", Options{Resolver: Sources{
		"sn": {Generator: newGen(1)}, "c": {Counter: silentCounter{newCounter(time.Second, time.UTC)}}, "b": {Generator: &batchGen{}}}})
	x := tp.Explain()
	if x.MaxLen != 3+6+1+1+19+19 || x.Template != tp.String() || len(x.Parts) != 6 {
		t.Fatalf("explanation %+v", x)
	}
	seq := x.Parts[1]
	if seq.Kind != "seq" || seq.Arg != "sn" || seq.Col != 4 || seq.MaxLen != 6 || seq.Source != "generator" ||
		len(seq.Options) != 1 || seq.Options[0] != (Option{Name: "width", Value: "6", Col: 13, ValueCol: 19}) {
		t.Errorf("seq part %+v", seq)
	}
	if x.UniqueBy != 1 {
		t.Errorf("UniqueBy = %d, want 1 (seq:sn)", x.UniqueBy)
	}
	if x.Parts[4].Source != "period counter" || x.Parts[5].Source != "batch generator" {
		t.Errorf("sources %q, %q", x.Parts[4].Source, x.Parts[5].Source)
	}
	if p := x.Parts[3]; !slices.Equal(p.Refs, []string{"sn"}) {
		t.Errorf("checksum refs %v", p.Refs)
	}
	if p := x.Parts[0]; p.Kind != "text" || p.Text != "SN-" || p.MaxLen != 3 {
		t.Errorf("text part %+v", p)
	}
	s := x.String()
	for _, frag := range []string{"max length: 49", "evaluation order: #1 #4 #5 #3", "unique by: #1 seq:sn", `"SN-"`, "sn (generator)", "width=6", "of=sn"} {
		if !strings.Contains(s, frag) {
			t.Errorf("String() lacks %q:\n%s", frag, s)
		}
	}
}

func TestNextN(t *testing.T) {
	ctx := context.Background()
	bg := &batchGen{}
	plain := newGen(100)
	tp := mustParse(t, "@{seq:b,width=3}-@{seq:p}", Options{Resolver: Sources{"b": {Generator: bg}, "p": {Generator: plain}}})
	got, err := tp.NextN(ctx, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"001-100", "002-101", "003-102"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if bg.batches.Load() != 1 || bg.calls.Load() != 0 || plain.calls.Load() != 3 {
		t.Fatalf("batches %d, batch-source Next calls %d, plain calls %d", bg.batches.Load(), bg.calls.Load(), plain.calls.Load())
	}
	if got := mustNext(t, tp, nil); got != "004-103" {
		t.Fatalf("Next after NextN = %q", got)
	}
	for _, n := range []int{0, -1} {
		_, err := tp.NextN(ctx, n, nil)
		wantErr(t, err, idforge.ErrInvalidCount)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tp.NextN(canceled, 2, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled NextN: %v", err)
	}
	if _, err := tp.Next(canceled, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled Next: %v", err)
	}
}

// TestPerSecondCounter follows the per-second scheme across second
// boundaries, a full second and a clock step back: the date always shows
// the period the counter counted in.
func TestPerSecondCounter(t *testing.T) {
	clk := clockAt(2025, 4, 13, 12, 0, 0)
	ctr := newCounter(time.Second, time.UTC)
	tp := mustParse(t, "@{date:yyMMddHHmmss}@{seq:persec,width=4}", Options{Clock: clk, Resolver: Sources{"persec": {Counter: ctr}}})
	next := func(want string) {
		t.Helper()
		if got := mustNext(t, tp, nil); got != want {
			t.Fatalf("at %s got %q, want %q", clk.Now().Format(time.StampMilli), got, want)
		}
	}
	next("2504131200000001")
	clk.Add(999 * time.Millisecond) // 12:00:00.999, same second
	next("2504131200000002")
	clk.Add(time.Millisecond) // 12:00:01.000: the counter restarts
	next("2504131200010001")
	next("2504131200010002")
	clk.Add(time.Second)
	next("2504131200020001")

	// The second is full: the counter moves on to 12:00:03 while the
	// clock still reads 12:00:02, and the date follows the counter.
	ctr.mu.Lock()
	ctr.cap = 2
	ctr.mu.Unlock()
	next("2504131200020002")
	next("2504131200030001")
	next("2504131200030002")
	next("2504131200040001")

	// The clock steps back five seconds: the counter keeps counting in
	// its latest period, and so does the date.
	clk.Add(-5 * time.Second)
	next("2504131200040002")

	// A width overflow is an error, not a fifth digit.
	ctr.mu.Lock()
	ctr.cap, ctr.n = 0, 9999
	ctr.mu.Unlock()
	if _, err := tp.Next(context.Background(), nil); !errors.Is(err, idforge.ErrSpaceExhausted) {
		t.Fatalf("counter past 9999: %v", err)
	}
}

// TestPerDayCounterAtMidnight checks that the date and a per-day counter
// agree across midnight in the template's zone.
func TestPerDayCounterAtMidnight(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	clk := fakeclock.New(time.Date(2017, 3, 4, 23, 59, 59, 999_000_000, shanghai))
	ctr := newCounter(24*time.Hour, shanghai)
	tp := mustParse(t, "@{date:yyyyMMdd}@{seq:order,width=5}", Options{Clock: clk, Location: shanghai, Resolver: Sources{"order": {Counter: ctr}}})
	for _, want := range []string{"2017030400001", "2017030400002"} {
		if got := mustNext(t, tp, nil); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	clk.Add(time.Millisecond)
	if got := mustNext(t, tp, nil); got != "2017030500001" {
		t.Fatalf("after midnight got %q", got)
	}
	// The clock steps back before midnight: the counter stays in the 5th.
	clk.Add(-time.Minute)
	if got := mustNext(t, tp, nil); got != "2017030500002" {
		t.Fatalf("after the step back got %q", got)
	}
}

// TestLatestPeriodWins gives a template two counters, one of which has
// moved to a later period: the date renders the later one.
func TestLatestPeriodWins(t *testing.T) {
	clk := clockAt(2025, 4, 13, 12, 0, 0)
	full := newCounter(time.Second, time.UTC)
	full.cap = 1
	// Two per-period counters prove nothing on their own (the date shows
	// only the later period): the key g makes the template unique, and
	// counters that do not say their period are not checked against the
	// dates.
	tp := mustParse(t, "@{date:HHmmss}-@{seq:a}-@{seq:b}-@{seq:g}", Options{Clock: clk, Resolver: Sources{
		"a": {Counter: silentCounter{newCounter(time.Second, time.UTC)}}, "b": {Counter: silentCounter{full}}, "g": {Generator: newGen(1)}}})
	for _, want := range []string{"120000-1-1-1", "120001-2-1-2", "120002-3-1-3"} {
		if got := mustNext(t, tp, nil); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

// TestConcurrent issues from one template on many goroutines: every
// serial is distinct because the counter's numbers are.
func TestConcurrent(t *testing.T) {
	const workers, each = 8, 2000
	clk := clockAt(2025, 4, 13, 12, 0, 0)
	tp := mustParse(t, "@{date:yyMMddHHmmss}@{seq:persec,width=6}@{checksum:luhn,of=all}-@{param:shop}-@{seq:g}",
		Options{Clock: clk, Resolver: Sources{"persec": {Counter: newCounter(time.Second, time.UTC)}, "g": {Generator: newGen(1)}}})
	params := map[string]string{"shop": "S1"}
	results := make(chan []string, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got []string
			for i := range each {
				if w == 0 && i%500 == 0 {
					clk.Add(time.Second)
				}
				s, err := tp.Next(context.Background(), params)
				if err != nil {
					errs <- err
					return
				}
				got = append(got, s)
			}
			results <- got
		}()
	}
	wg.Wait()
	close(errs)
	close(results)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for got := range results {
		for _, s := range got {
			if seen[s] {
				t.Fatalf("duplicate serial %q", s)
			}
			seen[s] = true
		}
	}
	if len(seen) != workers*each {
		t.Fatalf("%d serials, want %d", len(seen), workers*each)
	}
}

func TestLimits(t *testing.T) {
	_, err := Parse(context.Background(), strings.Repeat("A", MaxTextLen+1), Options{})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Col != MaxTextLen+1 {
		t.Fatalf("oversized template: %v", err)
	}
	// Many parts reading everything before them, and a long chain of
	// references running against the text order, stay cheap.
	all := "1" + strings.Repeat("@{checksum:mod}", (MaxTextLen-1-len(counterSuffix))/len("@{checksum:mod}"))
	tp := parseCounted(t, all, Options{})
	if s := mustNext(t, tp, nil); len(s) != tp.MaxLen() {
		t.Fatalf("rendered %d bytes, MaxLen %d", len(s), tp.MaxLen())
	}
	var b strings.Builder
	const links = 100
	for i := range links {
		fmt.Fprintf(&b, "@{checksum:luhn,of=a%d,as=a%d}", i+1, i)
	}
	fmt.Fprintf(&b, "@{seq:s,as=a%d}", links)
	tp = mustParse(t, b.String(), Options{Resolver: Sources{"s": {Generator: newGen(7)}}})
	if x := tp.Explain(); x.Order[0] != links || x.Order[len(x.Order)-1] != 0 {
		t.Fatalf("order %v", x.Order)
	}
	if s := mustNext(t, tp, nil); len(s) != links+1 || !strings.HasSuffix(s, "7") {
		t.Fatalf("rendered %q", s)
	}
}
