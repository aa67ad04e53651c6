package idforge_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The Chinese README is a translation of the English one, section for
// section. The tests below read both as Markdown outlines and compare
// everything a translation keeps: the headings and their order, and in each
// section its paragraphs, list items, table rows, code blocks (with their
// line counts) and inline code (commands, URLs, config keys, error codes),
// which stay byte for byte as they are. Only the prose differs, and prose
// is not compared.

// readmeTranslations pairs each README and guide with its translation.
var readmeTranslations = func() [][2]string {
	pairs := [][2]string{{"README.md", "README.zh-CN.md"}}
	guides, _ := filepath.Glob("docs/*.md")
	for _, g := range guides {
		pairs = append(pairs, [2]string{g, filepath.Join("docs/zh-CN", filepath.Base(g))})
	}
	return pairs
}()

// mdSection is one heading of a Markdown file and what follows it up to the
// next heading.
type mdSection struct {
	heading    string // the heading line, e.g. "## Try it"
	level      int    // the number of #
	paragraphs int
	listItems  int
	tableRows  int            // separator rows (|---|) not counted
	codeBlocks []int          // the line count of each fenced or indented code block
	codeSpans  map[string]int // inline code, whitespace collapsed, with its number of uses
}

// shape is everything about a section that a translation keeps.
func (s mdSection) shape() string {
	return fmt.Sprintf("h%d p%d l%d t%d c%v %v", s.level, s.paragraphs, s.listItems, s.tableRows, s.codeBlocks, s.codeSpans)
}

var (
	mdHeading   = regexp.MustCompile(`^(#{1,6}) +\S`)
	mdListItem  = regexp.MustCompile(`^ *([-*+]|\d+[.)]) `)
	mdTableSep  = regexp.MustCompile(`^\|[-:| ]+\|$`)
	mdCodeSpan  = regexp.MustCompile("`([^`]+)`")
	mdLocalLink = regexp.MustCompile(`\]\(([^)#:]+)(#[^)]*)?\)`)
)

// mdOutline splits a Markdown file into sections. The text before the first
// heading, if any, is a section with an empty heading.
func mdOutline(text string) []mdSection {
	sections := []mdSection{{codeSpans: map[string]int{}}}
	cur := func() *mdSection { return &sections[len(sections)-1] }
	var (
		prose    []string // the current section's text outside code
		fence    = false  // inside ``` … ```
		indented = false  // inside an indented code block
		prev     = ""     // the kind of the previous line
	)
	flush := func() {
		for _, m := range mdCodeSpan.FindAllStringSubmatch(strings.Join(prose, "\n"), -1) {
			cur().codeSpans[strings.Join(strings.Fields(m[1]), " ")]++
		}
		prose = nil
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		switch {
		case fence:
			if strings.HasPrefix(line, "```") {
				fence, prev = false, "code"
			} else {
				cur().codeBlocks[len(cur().codeBlocks)-1]++
			}
			continue
		case strings.HasPrefix(line, "```"):
			fence, prev = true, "code"
			cur().codeBlocks = append(cur().codeBlocks, 0)
			continue
		case indented && line == "":
			continue // a blank line inside the block, or the end of it
		case strings.HasPrefix(line, "    ") && (indented || prev == "blank"):
			if !indented {
				cur().codeBlocks = append(cur().codeBlocks, 0)
			}
			indented = true
			cur().codeBlocks[len(cur().codeBlocks)-1]++
			continue
		}
		if indented {
			// The blank lines skipped above ended the block.
			indented, prev = false, "blank"
		}
		kind := "prose"
		switch {
		case line == "":
			kind = "blank"
		case mdHeading.MatchString(line):
			flush()
			level := len(line) - len(strings.TrimLeft(line, "#"))
			sections = append(sections, mdSection{heading: line, level: level, codeSpans: map[string]int{}})
			prev = "heading"
			continue
		case strings.HasPrefix(line, "|"):
			kind = "table"
			if !mdTableSep.MatchString(line) {
				cur().tableRows++
			}
		case mdListItem.MatchString(line):
			kind = "list"
			cur().listItems++
		case strings.HasPrefix(line, " ") && (prev == "list" || prev == "continuation"):
			kind = "continuation"
		default:
			if prev != "prose" {
				cur().paragraphs++
			}
		}
		if kind != "blank" {
			prose = append(prose, line)
		}
		prev = kind
	}
	flush()
	if s := sections[0]; s.paragraphs+s.listItems+s.tableRows+len(s.codeBlocks) == 0 {
		sections = sections[1:]
	}
	return sections
}

// describeDrift says how a translated section differs from the original,
// in terms a translator can act on.
func describeDrift(orig, trans mdSection, origFile, transFile string) string {
	var d []string
	count := func(what string, a, b int) {
		if a != b {
			d = append(d, fmt.Sprintf("%s: %d in %s, %d in %s", what, a, origFile, b, transFile))
		}
	}
	count("heading level", orig.level, trans.level)
	count("paragraphs", orig.paragraphs, trans.paragraphs)
	count("list items", orig.listItems, trans.listItems)
	count("table rows", orig.tableRows, trans.tableRows)
	count("code blocks", len(orig.codeBlocks), len(trans.codeBlocks))
	if len(orig.codeBlocks) == len(trans.codeBlocks) && !slices.Equal(orig.codeBlocks, trans.codeBlocks) {
		d = append(d, fmt.Sprintf("lines per code block: %v in %s, %v in %s", orig.codeBlocks, origFile, trans.codeBlocks, transFile))
	}
	var only, extra []string
	for _, span := range slices.Sorted(maps.Keys(orig.codeSpans)) {
		if n := orig.codeSpans[span] - trans.codeSpans[span]; n > 0 {
			only = append(only, fmt.Sprintf("`%s`×%d", span, n))
		}
	}
	for _, span := range slices.Sorted(maps.Keys(trans.codeSpans)) {
		if n := trans.codeSpans[span] - orig.codeSpans[span]; n > 0 {
			extra = append(extra, fmt.Sprintf("`%s`×%d", span, n))
		}
	}
	if len(only) > 0 {
		d = append(d, fmt.Sprintf("inline code missing from %s: %s", transFile, strings.Join(only, " ")))
	}
	if len(extra) > 0 {
		d = append(d, fmt.Sprintf("inline code not in %s: %s", origFile, strings.Join(extra, " ")))
	}
	return strings.Join(d, "; ")
}

// features is a section's content as a multiset, for telling how alike
// two sections are: its blocks by kind, its code lines and its inline code.
func (s mdSection) features() map[string]int {
	f := map[string]int{"paragraph": s.paragraphs, "list item": s.listItems, "table row": s.tableRows, "code block": len(s.codeBlocks)}
	for _, n := range s.codeBlocks {
		f["code line"] += n
	}
	for span, n := range s.codeSpans {
		f["`"+span+"`"] += n
	}
	return f
}

// unlikeness is 0 for sections of the same shape, 1 for sections of
// different levels or with nothing in common, and in between the share of
// their content that one has and the other has not.
func unlikeness(a, b mdSection) float64 {
	switch {
	case a.shape() == b.shape():
		return 0
	case a.level != b.level:
		return 1
	}
	fa, fb := a.features(), b.features()
	common, all := 0, 0
	for k := range maps.Keys(fa) {
		common += min(fa[k], fb[k])
		all += max(fa[k], fb[k])
	}
	for k := range maps.Keys(fb) {
		if _, ok := fa[k]; !ok {
			all += fb[k]
		}
	}
	if all == 0 {
		return 0
	}
	return 1 - float64(common)/float64(all)
}

// compareOutlines reports every way the translation's outline differs from
// the original's, naming the original's section each time. It aligns the
// two outlines as an edit script of least cost: a section missing from
// either side costs 1, a pair of sections costs twice their unlikeness, so
// a section is taken for a translation of another only when they share
// content, and for missing otherwise.
func compareOutlines(orig, trans []mdSection, origFile, transFile string) []string {
	n, m := len(orig), len(trans)
	// cost[i][j]: the least cost of aligning orig[i:] with trans[j:].
	cost := make([][]float64, n+1)
	for i := range cost {
		cost[i] = make([]float64, m+1)
	}
	for i := n; i >= 0; i-- {
		for j := m; j >= 0; j-- {
			switch {
			case i == n:
				cost[i][j] = float64(m - j)
			case j == m:
				cost[i][j] = float64(n - i)
			default:
				cost[i][j] = min(2*unlikeness(orig[i], trans[j])+cost[i+1][j+1], 1+cost[i+1][j], 1+cost[i][j+1])
			}
		}
	}
	name := func(s []mdSection, i int) string {
		if i < 0 {
			return "the start of the file"
		}
		if s[i].heading == "" {
			return "the text before the first heading"
		}
		return fmt.Sprintf("%q", s[i].heading)
	}
	var problems []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && cost[i][j] == 2*unlikeness(orig[i], trans[j])+cost[i+1][j+1]:
			if d := describeDrift(orig[i], trans[j], origFile, transFile); d != "" {
				problems = append(problems, fmt.Sprintf("%s's section %s (heading %d) is translated as %s, which differs: %s",
					origFile, name(orig, i), i+1, name(trans, j), d))
			}
			i, j = i+1, j+1
		case i < n && cost[i][j] == 1+cost[i+1][j]:
			problems = append(problems, fmt.Sprintf(
				"%s has no translation of %s's section %s (heading %d of %d): translate it and put it after %s",
				transFile, origFile, name(orig, i), i+1, n, name(trans, j-1)))
			i++
		default:
			problems = append(problems, fmt.Sprintf(
				"%s's section %s (heading %d) matches no section of %s (it comes after %s there): remove it, or add the section to %s",
				transFile, name(trans, j), j+1, origFile, name(orig, i-1), origFile))
			j++
		}
	}
	return problems
}

// TestREADMETranslationInStep: README.zh-CN.md has every section of
// README.md, in the same order and at the same level, and each with the
// same paragraphs, list items, table rows, code blocks and inline code, so
// that a section, a row or an example added in English without its
// translation fails here, naming the section.
func TestREADMETranslationInStep(t *testing.T) {
	for _, pair := range readmeTranslations {
		t.Run(pair[1], func(t *testing.T) {
			orig, err := os.ReadFile(pair[0])
			if err != nil {
				t.Fatal(err)
			}
			trans, err := os.ReadFile(pair[1])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range compareOutlines(mdOutline(string(orig)), mdOutline(string(trans)), pair[0], pair[1]) {
				t.Error(p)
			}
		})
	}
}

// TestREADMELinks: each README links to its translation near the top, and
// every relative link in the READMEs names a file that exists.
func TestREADMELinks(t *testing.T) {
	for _, pair := range readmeTranslations {
		for _, link := range [][2]string{pair, {pair[1], pair[0]}} {
			raw, err := os.ReadFile(link[0])
			if err != nil {
				t.Fatal(err)
			}
			head := strings.Join(slices.Collect(func(yield func(string) bool) {
				for i, line := range strings.Split(string(raw), "\n") {
					if i >= 5 || !yield(line) {
						return
					}
				}
			}), "\n")
			rel, _ := filepath.Rel(filepath.Dir(link[0]), link[1])
			if !strings.Contains(head, "]("+rel+")") {
				t.Errorf("%s: the first lines do not link to %s", link[0], link[1])
			}
			for _, m := range mdLocalLink.FindAllStringSubmatch(string(raw), -1) {
				if _, err := os.Stat(filepath.Join(filepath.Dir(link[0]), m[1])); err != nil {
					t.Errorf("%s links to %s, which does not exist", link[0], m[1])
				}
			}
		}
	}
}

// TestREADMEOutlineCatchesDrift: the outline comparison names the section
// a translation lacks, the one it has in excess, and what differs in a
// section that is there, so that its failures say what to fix.
func TestREADMEOutlineCatchesDrift(t *testing.T) {
	orig := "# T\n\nintro\n\n## A\n\ntext `a`\n\n    cmd\n\n## B\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n### C\n\n- one\n- two\n  more\n\n## D\n\n```go\nx\ny\n```\n"
	for _, tc := range []struct {
		name, trans, want string
	}{
		{"identical", orig, ""},
		{"translated prose", strings.NewReplacer("intro", "介绍", "text", "文字", "one", "一", "more", "更多", "## A", "## 甲").Replace(orig), ""},
		{"missing section", strings.Replace(orig, "### C\n\n- one\n- two\n  more\n\n", "", 1),
			`has no translation of README.md's section "### C" (heading 4 of 5): translate it and put it after "## B"`},
		{"missing last section", strings.Replace(orig, "## D\n\n```go\nx\ny\n```\n", "", 1),
			`has no translation of README.md's section "## D" (heading 5 of 5)`},
		{"extra section", orig + "\n## E\n\nmore\n", `section "## E" (heading 6) matches no section of README.md (it comes after "## D" there)`},
		{"missing table row", strings.Replace(orig, "| 1 | 2 |\n", "", 1), `"## B" (heading 3) is translated as "## B", which differs: table rows: 2 in README.md, 1 in README.zh-CN.md`},
		{"missing code block", strings.Replace(orig, "    cmd\n\n", "", 1), `code blocks: 1 in README.md, 0 in README.zh-CN.md`},
		{"shorter code block", strings.Replace(orig, "x\ny\n", "x\n", 1), `lines per code block: [2] in README.md, [1] in README.zh-CN.md`},
		{"missing list item", strings.Replace(orig, "- two\n", "", 1), `list items: 2 in README.md, 1 in README.zh-CN.md`},
		{"changed inline code", strings.Replace(orig, "`a`", "`b`", 1), "inline code missing from README.zh-CN.md: `a`×1; inline code not in README.md: `b`×1"},
		{"split paragraph", strings.Replace(orig, "intro\n", "intro\n\nmore\n", 1), `paragraphs: 1 in README.md, 2 in README.zh-CN.md`},
		{"wrong level", strings.Replace(orig, "### C", "## C", 1), `heading level: 3 in README.md, 2 in README.zh-CN.md`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(compareOutlines(mdOutline(orig), mdOutline(tc.trans), "README.md", "README.zh-CN.md"), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got:\n%s\nwant it to say: %s", got, tc.want)
			}
		})
	}
}

// executableFence matches the code blocks the docs test runs or checks
// (cmd/idforge/docs_test.go): a translation holds them byte for byte.
var executableFence = regexp.MustCompile("^```(toml|go|sh run)")

// fencedBlocks returns the fenced blocks of a Markdown file that the docs
// test executes, with their opening fence line.
func fencedBlocks(text string) []string {
	var out []string
	cur, in := "", false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !in && strings.HasPrefix(line, "```"):
			in, cur = true, line+"\n"
		case in && strings.TrimSpace(line) == "```":
			in = false
			if executableFence.MatchString(cur) {
				out = append(out, cur)
			}
		case in:
			cur += line + "\n"
		}
	}
	return out
}

// TestDocsTranslationsHoldTheSameExamples: the examples the docs test
// executes are the same, byte for byte and in the same order, in a
// document and its translation, so that running the English ones checks
// both.
func TestDocsTranslationsHoldTheSameExamples(t *testing.T) {
	for _, pair := range readmeTranslations {
		orig, err1 := os.ReadFile(pair[0])
		trans, err2 := os.ReadFile(pair[1])
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		a, b := fencedBlocks(string(orig)), fencedBlocks(string(trans))
		if len(a) != len(b) {
			t.Errorf("%s has %d executed examples, %s %d", pair[0], len(a), pair[1], len(b))
			continue
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%s: executed example %d differs from %s's:\n%s\nvs\n%s", pair[1], i+1, pair[0], b[i], a[i])
			}
		}
	}
}

// TestHTTPGuideListsTheAPI: docs/http-api.md names every path of
// api/openapi.json, and no path the document lacks.
func TestHTTPGuideListsTheAPI(t *testing.T) {
	raw, err := os.ReadFile("api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	guide, err := os.ReadFile("docs/http-api.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(guide)
	for _, p := range slices.Sorted(maps.Keys(doc.Paths)) {
		short := p
		if i := strings.IndexAny(p, "{"); i > 0 && strings.HasPrefix(p, "/tinyid/") {
			short = p[:i]
		}
		if !strings.Contains(text, p) && !strings.Contains(text, "/"+filepath.Base(short)) {
			t.Errorf("docs/http-api.md does not mention %s, which api/openapi.json describes", p)
		}
	}
	for _, m := range regexp.MustCompile("`(?:GET|POST|PATCH|DELETE) (/[^`?[ ]*)").FindAllStringSubmatch(text, -1) {
		if _, ok := doc.Paths[m[1]]; !ok {
			t.Errorf("docs/http-api.md names %s, which api/openapi.json does not describe", m[1])
		}
	}
}
