package persist

import (
	"math/rand/v2"
	"time"
)

// KeyDelay is the effect of Redis's test knobs key-load-delay and
// rdb-key-save-delay (its debugDelay) for keys keys: usec microseconds
// each, or for a negative -n one microsecond each with chance 1/n. Loads
// and saves call it off the shard actors, so only they slow down.
func KeyDelay(usec int64, keys int) {
	if usec == 0 || keys <= 0 {
		return
	}
	total := int64(0)
	if usec > 0 {
		total = usec * int64(keys)
	} else {
		for range keys {
			if rand.Int64N(-usec) == 0 {
				total++
			}
		}
	}
	if total > 0 {
		time.Sleep(time.Duration(total) * time.Microsecond)
	}
}
