package serial

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Explanation describes a parsed template: its parts, the order they are
// evaluated in and the longest serial it can produce.
type Explanation struct {
	// Template is the template's text.
	Template string
	// MaxLen is Template.MaxLen.
	MaxLen int
	// Params is Template.Params.
	Params []string
	// Parts are the pieces of the template in text order, static text
	// included.
	Parts []PartInfo
	// Order is the evaluation order: indexes into Parts, static text
	// left out.
	Order []int
	// UniqueBy is the index in Parts of the counter Parse's uniqueness
	// proof rests on (see Uniqueness in the package documentation).
	UniqueBy int
}

// PartInfo describes one piece of a template.
type PartInfo struct {
	// Col is the 1-based byte column where the piece starts.
	Col int
	// Kind is the expression's kind, or "text" for static text.
	Kind string
	// Text is the static text (with @@ unescaped); "" for expressions.
	Text string
	// Arg and Options are the expression's argument and options as
	// written, as= included.
	Arg     string
	Options []Option
	// MaxLen is the most bytes the piece renders.
	MaxLen int
	// Names are the names references can use for the part.
	Names []string
	// Refs are the names the part refers to, evaluated before it.
	Refs []string
	// Source says what a seq part draws from: "generator", "batch
	// generator" or "period counter"; "" for other parts.
	Source string
}

// Explain describes t.
func (t *Template) Explain() Explanation {
	x := Explanation{Template: t.text, MaxLen: t.maxLen, Params: t.Params(), Order: slices.Clone(t.order), UniqueBy: t.uniqueBy}
	for _, n := range t.nodes {
		p := PartInfo{Col: n.col, Kind: n.kind, Arg: n.arg, Options: slices.Clone(n.opts), MaxLen: n.max, Names: slices.Clone(n.names)}
		if n.part == nil {
			p.Text = n.static
		}
		for _, r := range n.refs {
			p.Refs = append(p.Refs, r.name)
		}
		if sp, ok := n.part.(*seqPart); ok {
			switch {
			case sp.by != "" && sp.ctr != nil:
				p.Source = "period counter " + sp.name + "-VALUE per " + sp.by + ", created on first use"
			case sp.by != "":
				p.Source = "generator " + sp.name + "-VALUE per " + sp.by + ", created on first use"
			case sp.ctr != nil:
				p.Source = "period counter"
			case sp.batch != nil:
				p.Source = "batch generator"
			default:
				p.Source = "generator"
			}
		}
		x.Parts = append(x.Parts, p)
	}
	return x
}

// String renders x as a table for people, one line per part.
func (x Explanation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "template: %s\nmax length: %d\n", x.Template, x.MaxLen)
	if len(x.Params) > 0 {
		fmt.Fprintf(&b, "parameters: %s\n", strings.Join(x.Params, ", "))
	}
	order := make([]string, len(x.Order))
	for i, p := range x.Order {
		order[i] = "#" + strconv.Itoa(p)
	}
	fmt.Fprintf(&b, "evaluation order: %s\n", strings.Join(order, " "))
	if u := x.UniqueBy; u >= 0 && u < len(x.Parts) {
		p := x.Parts[u]
		fmt.Fprintf(&b, "unique by: #%d %s:%s, a counter every serial shows\n", u, p.Kind, p.Arg)
	}
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "#\tcol\tkind\targument\toptions\tmax\tnames\trefers to")
	for i, p := range x.Parts {
		arg := p.Arg
		if p.Kind == "text" {
			arg = strconv.Quote(p.Text)
		} else if p.Source != "" {
			arg += " (" + p.Source + ")"
		}
		opts := make([]string, len(p.Options))
		for j, o := range p.Options {
			opts[j] = o.Name + "=" + o.Value
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%d\t%s\t%s\n", i, p.Col, p.Kind, arg,
			dash(strings.Join(opts, ",")), p.MaxLen, dash(strings.Join(p.Names, ", ")), dash(strings.Join(p.Refs, ", ")))
	}
	w.Flush()
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
