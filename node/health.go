package node

import (
	"fmt"
	"strings"

	"github.com/idforge/idforge/plugin"
)

// describePlugins describes configured plugins for operators: the kind,
// and the keys it is limited to.
func describePlugins(cs []plugin.Config) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		d := c.Kind
		if len(c.Keys) > 0 {
			d = fmt.Sprintf("%s (keys %s)", c.Kind, strings.Join(c.Keys, ", "))
		}
		out = append(out, d)
	}
	return out
}

// Plugins describes the configured plugins, in order: their kind and
// the keys they are limited to.
func (n *Node) Plugins() []string { return n.pluginList }
