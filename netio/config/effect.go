package config

// NoEffect lists the directives that are set to something other than
// their default but that slotd only accepts for redis.conf compatibility
// (the node logs them once at start-up, so they never silently
// misbehave).
func (c *Config) NoEffect() []string {
	var out []string
	for _, d := range c.dirs {
		if d.has(compat) && !c.isDefault(d, d.cur.Load()) {
			out = append(out, d.name)
		}
	}
	return out
}
