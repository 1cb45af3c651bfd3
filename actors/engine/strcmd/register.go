package strcmd

import "sync"

var registerOnce sync.Once

// Register adds the string and bitmap commands to the command table and binds their
// implementations. The wiring calls it (once per process is enough; later
// calls do nothing) before any node runs; packages that add subcommands to
// a container registered here come after it.
func Register() {
	registerOnce.Do(func() {
		registerBitmap()
		registerBitmapField()
		registerStringsCore()
		registerStringsLcs()
		registerStringsMulti()
		registerStringsNum()
		registerStringsRange()
	})
}
