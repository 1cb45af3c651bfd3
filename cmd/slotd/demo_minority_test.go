package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The minority demo's figure counts the writes the cut-off primary took
// after the cut: a write sent before the cut whose reply came back after
// it may have reached the replica in time, so it is not one of them (the
// demo would report it "present after the heal", as a run did).
func TestMinorityWriterCountsWritesSentAfterTheCut(t *testing.T) {
	cut := time.Now()
	w := &minorityWriter{
		acks: []string{"1", "2", "3"},
		sent: []time.Time{cut.Add(-2 * time.Millisecond), cut.Add(-time.Microsecond), cut.Add(time.Millisecond)},
	}
	assert.Equal(t, []string{"3"}, w.sentAfter(cut))
}
