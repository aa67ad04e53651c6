package quota

// Limiter returns the plugin that applies the quotas.
func (m *Manager) Limiter() *Limiter { return m.lim }
