package ui

import (
	"testing"

	"github.com/idforge/idforge/internal/testsvc"
)

// TestBrowserModule runs the admin page's browser test, which lives in the
// module server/ui/uitest so that chromedp stays out of idforge's go.mod
// (see testsvc.NestedModule).
func TestBrowserModule(t *testing.T) { testsvc.NestedModule(t, "uitest") }
