// Package uitest drives idforge's admin page (package ui) in a real
// headless Chromium against a real node. It is a module of its own, whose
// go.mod replaces github.com/idforge/idforge with the checkout beside it,
// so that chromedp stays out of idforge's go.mod (DEVELOPERS.md says
// how it is run).
package uitest
