package serial

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"
)

// readmeTemplate finds the template column of the serial tables in the
// READMEs: | `number` | `template` | …
var readmeTemplate = regexp.MustCompile("(?m)^\\| `[^`]*` \\| `([^`]*@\\{[^`]*)` \\|")

// Every template the READMEs show as an example is accepted, with the
// sources they say it uses: per-day and per-second counters, keys.
func TestReadmeTemplatesAreUnique(t *testing.T) {
	for _, file := range []string{"../docs/serial-numbers.md", "../docs/zh-CN/serial-numbers.md"} {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		found := readmeTemplate.FindAllStringSubmatch(string(text), -1)
		if len(found) < 5 {
			t.Fatalf("%s: found %d example templates, want the 5 of the serial section", file, len(found))
		}
		for _, m := range found {
			r := ResolverFunc(func(_ context.Context, name string) (Source, error) {
				switch name {
				case "daily":
					return Source{Counter: newCounter(24*time.Hour, time.UTC)}, nil
				case "persec":
					return Source{Counter: newCounter(time.Second, time.UTC)}, nil
				}
				return Source{Generator: newGen(1)}, nil
			})
			if _, err := Parse(context.Background(), m[1], Options{Resolver: r}); err != nil {
				t.Errorf("%s: example %s: %v", file, m[1], err)
			}
		}
	}
}
