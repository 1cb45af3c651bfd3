package config

import "sync/atomic"

// MirrorInt keeps v equal to the integer directive name: set now, and again
// after every change (for hot paths that must not take the config lock).
func (c *Config) MirrorInt(name string, v *atomic.Int64) {
	v.Store(c.Int(name))
	c.OnChange(name, func(string) { v.Store(c.Int(name)) })
}
