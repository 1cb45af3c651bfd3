package bus

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// recorder is an Executor that writes down what it is asked to do.
type recorder struct {
	calls   []string
	saveErr error
}

func (r *recorder) add(format string, args ...any) {
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

func (r *recorder) SaveConfig(durable bool) error {
	r.add("save durable=%v", durable)
	return r.saveErr
}
func (r *recorder) Log(line string)         { r.add("log %s", line) }
func (r *recorder) Promote()                { r.add("promote") }
func (r *recorder) Publish()                { r.add("publish") }
func (r *recorder) Dial(d Dial)             { r.add("dial %d", d.Link) }
func (r *recorder) Send(s Send)             { r.add("send %d %s", s.Link, s.Frame.GetHeader().GetType()) }
func (r *recorder) Close(l LinkID)          { r.add("close %d", l) }
func (r *recorder) Deliver(d Delivery)      { r.add("deliver %s", d.Channel) }
func (r *recorder) DropSlots(slots []int)   { r.add("drop %v", slots) }
func (r *recorder) Replicate(p string)      { r.add("replicate %s", p) }
func (r *recorder) UnpauseWrites()          { r.add("unpause") }
func (r *recorder) PauseWrites(until int64) { r.add("pause %d", until) }
func (r *recorder) AwaitOffset(off uint64)  { r.add("await %d", off) }
func (r *recorder) SyncConfig()             { r.add("sync") }

func frame(t busv1.Type) *busv1.Frame {
	return &busv1.Frame{Header: &busv1.Header{Type: t}}
}

// every effect of a step at once.
func allEffects(sync bool) Effects {
	return Effects{
		Save: true, Sync: sync, Publish: true,
		Dial: []Dial{{Link: 7}},
		Send: []Send{{Link: 3, Frame: frame(busv1.Type_TYPE_FAILOVER_AUTH_ACK)},
			{Link: 3, Frame: frame(busv1.Type_TYPE_PONG)}, {Link: 5, Frame: frame(busv1.Type_TYPE_UPDATE)}},
		Close: []LinkID{4}, Replicate: idB, DropSlots: []int{1, 2}, Promote: true,
		PauseWrites: 99, UnpauseWrites: true, AwaitOffset: 42,
		Log:     []string{"first", "second"},
		Deliver: []Delivery{{Channel: []byte("a")}, {Channel: []byte("b")}},
	}
}

// A vote, a claim or any frame leaves only after the configuration that
// allows it is saved (durably for the node's own epochs and votes); the
// routing table goes out after promotion is under way; frames keep their
// order; a save of learned state is fsync'd last.
func TestApplyOrder(t *testing.T) {
	var r recorder
	require.NoError(t, Apply(allEffects(true), &r))
	assert.Equal(t, []string{
		"save durable=true",
		"log first", "log second",
		"promote", "publish",
		"dial 7",
		"send 3 TYPE_FAILOVER_AUTH_ACK", "send 3 TYPE_PONG", "send 5 TYPE_UPDATE",
		"close 4",
		"deliver a", "deliver b",
		"drop [1 2]",
		"replicate " + idB,
		"unpause", "pause 99", "await 42",
	}, r.calls)

	r = recorder{}
	require.NoError(t, Apply(allEffects(false), &r))
	require.NotEmpty(t, r.calls)
	assert.Equal(t, "save durable=false", r.calls[0])
	assert.Equal(t, "sync", r.calls[len(r.calls)-1], "a save that was not durable is fsync'd after every other effect")
	assert.Equal(t, 1, countOf(r.calls, "sync"))
}

// When nodes.conf cannot be written the node does nothing of the step.
func TestApplySaveFailureStops(t *testing.T) {
	r := recorder{saveErr: errors.New("disk full")}
	err := Apply(allEffects(true), &r)
	require.ErrorIs(t, err, r.saveErr)
	assert.Equal(t, []string{"save durable=true"}, r.calls)
}

// A step that saved nothing is not synced; an empty step does nothing.
func TestApplyNoSave(t *testing.T) {
	var r recorder
	require.NoError(t, Apply(Effects{Send: []Send{{Link: 1, Frame: frame(busv1.Type_TYPE_PING)}}}, &r))
	assert.Equal(t, []string{"send 1 TYPE_PING"}, r.calls)
	r = recorder{}
	require.NoError(t, Apply(Effects{}, &r))
	assert.Empty(t, r.calls)
}

// savingRecorder also records what nodes.conf holds when it is saved.
type savingRecorder struct {
	recorder
	st    *State
	saved string
}

func (r *savingRecorder) SaveConfig(durable bool) error {
	r.saved = r.st.Config()
	return r.recorder.SaveConfig(durable)
}

// A primary's vote: the lastVoteEpoch it grants is saved durably before
// the FAILOVER_AUTH_ACK carrying it is handed to Send.
func TestApplyVoteSavedBeforeSent(t *testing.T) {
	s, links := voter(t)
	recv(s, t0+10, authRequest(idR1, idB, 6, 2, rangeSet(8192, 12287), false))
	r := savingRecorder{st: s}
	require.NoError(t, Apply(s.TakeEffects(), &r))
	ack := fmt.Sprintf("send %d TYPE_FAILOVER_AUTH_ACK", links[idR1])
	require.Contains(t, r.calls, ack)
	assert.Equal(t, "save durable=true", r.calls[0])
	assert.Contains(t, r.saved, "lastVoteEpoch 6\n")
	assert.NotContains(t, r.calls, "sync", "a durable save needs no later fsync")
}

func countOf(calls []string, s string) int {
	n := 0
	for _, c := range calls {
		if c == s {
			n++
		}
	}
	return n
}
