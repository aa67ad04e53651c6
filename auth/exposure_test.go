package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckExposure(t *testing.T) {
	tests := []struct {
		addr   string
		tokens bool
		err    bool
	}{
		{"127.0.0.1:8080", false, false},
		{"127.1.2.3:8080", false, false},
		{"[::1]:8080", false, false},
		{"localhost:8080", false, false},
		{"idforge.localhost:8080", false, false},
		{"0.0.0.0:8080", false, true},
		{":8080", false, true},
		{"[::]:8080", false, true},
		{"10.0.0.5:8080", false, true},
		{"idforge.example.com:8080", false, true},
		{"0.0.0.0:8080", true, false},
		{":8080", true, false},
	}
	for _, tc := range tests {
		err := CheckExposure(tc.addr, tc.tokens)
		if (err != nil) != tc.err {
			t.Errorf("CheckExposure(%q, %v) = %v, want error: %v", tc.addr, tc.tokens, err, tc.err)
			continue
		}
		if err == nil {
			continue
		}
		if !errors.Is(err, ErrExposed) {
			t.Errorf("CheckExposure(%q): %v does not wrap ErrExposed", tc.addr, err)
		}
		for _, want := range []string{"[auth]", "tokens", EnvToken, "127.0.0.1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("CheckExposure(%q): %q does not mention %q", tc.addr, err, want)
			}
		}
	}
	if err := CheckExposure("no-port", false); err == nil || errors.Is(err, ErrExposed) {
		t.Errorf("CheckExposure(no-port) = %v, want an address error", err)
	}
}
