package serial

import (
	"testing"
)

// Every serial a template renders matches its Pattern, and values of
// another shape do not.
func TestPatternMatchesWhatTemplatesRender(t *testing.T) {
	for _, c := range []struct {
		text   string
		params map[string]string
		bad    []string
	}{
		{"SN-@{seq:n,width=6}-@{checksum:mod,of=seq}", nil, []string{"SN-00001-2", "SN-000001-X", "SX-000001-2", "SN-000001-2 "}},
		{"QJ@{seq:n}", nil, []string{"QJ", "QJ1a", "qj1"}},
		{"@{date:yyyyMMdd}@{seq:n,width=5}", nil, []string{"2025010100001x", "202501010001"}},
		{"@{param:area,chars=digits}-@{param:unit,width=4}-@{seq:n,width=5}", map[string]string{"area": "010", "unit": "6541"}, []string{"01a-6541-00001", "010-654-00001", "-6541-00001"}},
		{"R@{random:4,chars=upper}@{seq:n,width=3}@{checksum:iso7064}", nil, []string{"Rabcd001X", "RABC001X"}},
		{"a.b*@{seq:n,width=2,pad=_}", nil, []string{"aXb*_1", "a.b*1"}},
	} {
		tp := mustParse(t, c.text, Options{Resolver: Sources{"n": {Generator: newGen(7)}}, Clock: clockAt(2025, 1, 1, 12, 0, 0)})
		re := tp.Pattern()
		for range 3 {
			s := mustNext(t, tp, c.params)
			if !re.MatchString(s) {
				t.Errorf("%s: %q does not match %s", c.text, s, re)
			}
		}
		for _, b := range c.bad {
			if re.MatchString(b) {
				t.Errorf("%s: %q matches %s", c.text, b, re)
			}
		}
	}
}
