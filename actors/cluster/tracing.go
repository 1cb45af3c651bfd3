package cluster

import (
	"math/rand/v2"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/slotd/slotd/actors/trace"
	"github.com/slotd/slotd/bus"
	busv1 "github.com/slotd/slotd/proto/slotd/bus/v1"
)

// busTrace is the cluster actor's part of actor tracing (trace-actors
// cluster or all): it records what the state machine did in protocol terms
// — the frames it sends, the log lines of a step, node state changes
// (PFAIL, FAIL, promotion) — and stamps the frames it sends with the trace
// id and the node's trace clock (a hybrid logical clock), so that `slotd
// trace` can merge every node's records into one causal timeline. While tracing is off it costs
// one atomic load per step.
type busTrace struct {
	on bool // tracing was on at the last step
	// id is the trace of the current failure episode (0: none); until is
	// when it lapses without news (2 × node timeout after the last event
	// or frame of it).
	id    uint64
	until int64
	// flags and myMaster are the node flags and my primary seen after the
	// last traced step, to tell what changed.
	flags    map[string]bus.Flags
	myMaster string
	epoch    uint64
	// nodeOf names the node of each link during one apply (built lazily).
	nodeOf map[bus.LinkID]string
	// stamped are the frames of this apply already stamped (a broadcast
	// frame is shared by several Sends).
	stamped map[*busv1.Frame]*busv1.Frame
}

func traceOn() bool { return trace.Enabled("cluster") }

// traceEvent records an event of the node (a state change, a log line):
// it starts an episode, or extends the running one.
func (a *clusterActor) traceEvent(msg string) {
	bt := &a.btr
	now := time.Now().UnixMilli()
	if !bt.active(now) {
		bt.id = rand.Uint64() | 1
	}
	bt.until = now + 2*a.st.Options().NodeTimeout
	trace.Add(trace.Record{Kind: "cluster", ID: "cluster", Message: msg, TraceID: bt.id})
}

// traceReceived joins the trace of a frame from a tracing node: when no
// episode of our own is running, or when its id is lower than ours (the
// nodes of one episode converge on one id within a gossip round).
// Frames alone never extend an episode: only events do.
func (a *clusterActor) traceReceived(now int64, f *busv1.Frame) {
	id := f.GetHeader().GetTraceId()
	if id == 0 {
		return
	}
	if !a.btr.active(now) {
		a.btr.id, a.btr.until = id, now+2*a.st.Options().NodeTimeout
	} else if id < a.btr.id {
		a.btr.id = id
	}
}

// active reports whether an episode is running at now.
func (bt *busTrace) active(now int64) bool { return bt.id != 0 && now <= bt.until }

// traceStep records the node state changes of the step just run, before
// its effects go out. The first traced step only takes the baseline.
func (a *clusterActor) traceStep(now int64) {
	bt := &a.btr
	bt.nodeOf, bt.stamped = nil, nil
	if !traceOn() {
		bt.on, bt.flags = false, nil
		return
	}
	me := a.st.Myself()
	nodes := a.st.NodeList()
	if !bt.on {
		bt.on = true
		bt.flags = map[string]bus.Flags{}
		for _, n := range nodes {
			bt.flags[n.ID] = n.Flags
		}
		bt.myMaster, bt.epoch = me.MasterID, a.st.CurrentEpoch()
		return
	}
	var events []string
	for _, n := range nodes {
		old, known := bt.flags[n.ID]
		bt.flags[n.ID] = n.Flags
		if !known || n.ID == me.ID {
			continue
		}
		switch {
		case n.Flags&bus.FlagFail != 0 && old&bus.FlagFail == 0:
			events = append(events, "FAIL "+bus.ShortID(n.ID)+" marked")
		case n.Flags&bus.FlagPFail != 0 && old&bus.FlagPFail == 0:
			events = append(events, "PFAIL "+bus.ShortID(n.ID)+" marked")
		case n.Flags&(bus.FlagFail|bus.FlagPFail) == 0 && old&(bus.FlagFail|bus.FlagPFail) != 0:
			events = append(events, "failure of "+bus.ShortID(n.ID)+" cleared")
		}
	}
	if ep := a.st.CurrentEpoch(); ep != bt.epoch {
		bt.epoch = ep
		events = append(events, "currentEpoch="+strconv.FormatUint(ep, 10))
	}
	if me.MasterID != bt.myMaster {
		if me.MasterID == "" {
			events = append(events, "PROMOTED myself to primary config="+strconv.FormatUint(me.ConfigEpoch, 10)+
				" slots="+strconv.Itoa(me.Slots.Count()))
		} else {
			events = append(events, "REPLICA myself now replicates "+bus.ShortID(me.MasterID))
		}
		bt.myMaster = me.MasterID
	}
	for _, e := range events {
		a.traceEvent("event " + e)
	}
}

// traceSend stamps f for the trace and records its sending on link; it
// returns the frame to write (a copy: frames are immutable once emitted).
func (a *clusterActor) traceSend(link bus.LinkID, f *busv1.Frame) *busv1.Frame {
	bt := &a.btr
	if !bt.on {
		return f
	}
	if bt.nodeOf == nil {
		bt.nodeOf = map[bus.LinkID]string{}
		for _, l := range a.st.Links(time.Now().UnixMilli()) {
			bt.nodeOf[l.Link] = l.Node
		}
		bt.stamped = map[*busv1.Frame]*busv1.Frame{}
	}
	c := bt.stamped[f]
	if c == nil {
		h := proto.Clone(f.GetHeader()).(*busv1.Header)
		h.TraceClock = trace.Tick()
		if bt.active(time.Now().UnixMilli()) {
			h.TraceId = bt.id
		}
		c = &busv1.Frame{Header: h, Gossip: f.Gossip, Forgotten: f.Forgotten, Fail: f.Fail, Update: f.Update,
			Publish: f.Publish}
		bt.stamped[f] = c
	}
	trace.Add(trace.Record{Kind: "cluster", ID: "cluster", Message: "send " + bus.Describe(c) + " to " +
		bus.ShortID(bt.nodeOf[link]), TraceID: c.Header.TraceId, Clock: c.Header.TraceClock})
	return c
}
