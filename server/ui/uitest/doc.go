// Package uitest drives idforge's admin page (package ui) in a real
// headless Chromium against a real node: the keys table fills with data,
// follows the node, renders to a screenshot of sane size, and asks for a
// token on a node that needs one.
//
// It is a module of its own so that github.com/chromedp/chromedp and its
// protocol bindings, which only this test needs, stay out of idforge's
// go.mod and go.sum: building or importing idforge never fetches them.
// Its go.mod replaces github.com/idforge/idforge with the checkout it
// sits in, so it always tests the code beside it. The parent module's
// test TestBrowserModule (package ui) runs this module's vet and tests,
// so the README's "go vet ./... && go test -race ./..." still covers it.
package uitest
