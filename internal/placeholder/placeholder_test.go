package placeholder

import "testing"

func TestNumbered(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                            "SELECT 1",
		"UPDATE t SET a = ? WHERE b = ?":      "UPDATE t SET a = $1 WHERE b = $2",
		"INSERT INTO t VALUES (?, 'é', ?, ?)": "INSERT INTO t VALUES ($1, 'é', $2, $3)",
	} {
		if got := Numbered(in); got != want {
			t.Errorf("Numbered(%q) = %q, want %q", in, got, want)
		}
	}
}
