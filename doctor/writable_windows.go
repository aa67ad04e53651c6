package doctor

import "os"

// writable reports whether this user may create files in the directory dir:
// Windows has no access(2), so it creates one and removes it.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".idforge-doctor-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
