package idforge_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idforge/idforge"
)

// TestKeyNameMessageNamesTheCharacter: a refused name is explained by the
// character the user typed, its position in characters and its code
// point, never by a raw byte shown as if it were a character.
func TestKeyNameMessageNamesTheCharacter(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"订单", "idforge: invalid key name: character 1 '订' (U+8BA2) is not allowed; names use A-Z a-z 0-9 . _ : -"},
		{"order-单", "character 7 '单' (U+5355) is not allowed"},
		{"a/b", "character 2 '/' (U+002F) is not allowed"},
		{"a\xe8", "character 2 (byte 0xE8, which is not UTF-8) is not allowed"},
		// Too long and not ASCII: the characters are the problem, not the
		// 129 bytes they take.
		{strings.Repeat("单", 43), "character 1 '单' (U+5355)"},
		{strings.Repeat("k", idforge.MaxKeyLen+1), "129 characters long, at most 128 allowed"},
	} {
		err := idforge.ValidateKeyName(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ValidateKeyName(%q) = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

// TestDocsNameWhatTheyCite: the READMEs, DEVELOPERS.md and every Go file
// (its go doc and code comments) name the systems and ideas they cite —
// JD's logistics serial-number platform, Meituan Leaf, Vesta — and never
// by the labels of the material idforge was designed from
// (testdata/uncited-labels.txt lists them), which no user has seen.
func TestDocsNameWhatTheyCite(t *testing.T) {
	list, err := os.ReadFile(filepath.Join("testdata", "uncited-labels.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var banned []string
	for _, line := range strings.Split(string(list), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			banned = append(banned, line)
		}
	}
	check := func(path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(b), "\n") {
			lower := strings.ToLower(line)
			for _, w := range banned {
				if strings.Contains(lower, w) {
					t.Errorf("%s:%d mentions %q; name the system or idea instead: %s", path, n+1, w, strings.TrimSpace(line))
				}
			}
		}
	}
	docs, _ := filepath.Glob("docs/*.md")
	translated, _ := filepath.Glob("docs/zh-CN/*.md")
	for _, doc := range append(append([]string{"README.md", "README.zh-CN.md", "DEVELOPERS.md"}, docs...), translated...) {
		check(doc)
	}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			check(path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
