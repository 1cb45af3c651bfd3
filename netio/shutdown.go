package netio

// The shutdown sequence shared by SHUTDOWN and SIGTERM/SIGINT
// (shutdown-on-sigterm / shutdown-on-sigint), as Valkey 9 runs it before
// the final save:
//
//   - FAILOVER, on a cluster primary serving slots: its best replica is
//     asked to take over (the cluster's HandOff: a manual failover whose
//     write pause lasts only for the replica's catch-up); once this node
//     follows it, it keeps answering MOVED while clients still come with
//     the old slot map (until none came for movedQuiet, movedLinger at
//     most): a client that finds the node gone instead retries against a
//     dead address (go-redis's pool waits a second per failed dial) until
//     it reloads the slot map;
//   - otherwise, unless NOW, when shutdown-timeout is not 0 and a replica
//     lags: client writes are paused and the replicas get up to
//     shutdown-timeout seconds to acknowledge everything ("Waiting for
//     replicas before shutting down.").
//
// SHUTDOWN ABORT cancels a sequence in progress (writes resume; the
// SHUTDOWN caller gets an error). The caller then saves (or not) and stops
// the node; if it does not stop after all (a failed save), EndShutdown
// lifts the pause.

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ShutdownOptions are the modifiers of SHUTDOWN (and the flags of
// shutdown-on-sigterm/-sigint) that PrepareShutdown acts on; SAVE, NOSAVE
// and FORCE concern the save that follows.
type ShutdownOptions struct {
	Now      bool // do not wait for lagging replicas
	Failover bool // hand the slots to a replica first (cluster primary)
}

// HandOffer is what the cluster offers a shutdown: HandOff asks the best
// replica to take over and calls done(true) once this node follows it,
// done(false) if no replica can or it did not happen in time.
type HandOffer interface {
	HandOff(done func(ok bool))
}

// ErrShutdownAborted: SHUTDOWN ABORT came while the sequence waited.
var ErrShutdownAborted = errors.New("shutdown aborted")

// shutdownState is the sequence in progress; lingering and lastMoved
// time the MOVED replies after a hand-off (dispatch.go records them).
type shutdownState struct {
	mu     sync.Mutex
	active bool
	abort  chan struct{}
	// over is closed, with err, when the sequence ends without stopping
	// the node; callers that joined it return err.
	over chan struct{}
	err  error
	// waiting counts the SHUTDOWN callers blocked on the sequence
	// (blocked_clients); until is when the replica wait gives up (unix
	// ms; 0: not waiting: shutdown_in_milliseconds).
	waiting   atomic.Int64
	until     atomic.Int64
	lingering atomic.Bool
	lastMoved atomic.Int64
	moved     atomic.Int64
}

// After a hand-off the node answers MOVED until no client needed one for
// movedQuiet, movedLinger at most.
const (
	movedQuiet  = 200 * time.Millisecond
	movedLinger = 2 * time.Second
)

// lingerMoved waits while clients still get MOVED from this node.
func (s *Server) lingerMoved(abort chan struct{}) {
	st := &s.shut
	start := time.Now()
	st.lastMoved.Store(start.UnixNano())
	st.lingering.Store(true)
	defer st.lingering.Store(false)
	for {
		quiet := time.Since(time.Unix(0, st.lastMoved.Load()))
		if quiet >= movedQuiet || time.Since(start) >= movedLinger {
			break
		}
		select {
		case <-abort:
			return
		case <-time.After(movedQuiet - quiet):
		}
	}
	s.Log.Warn().Dur("after", time.Since(start)).Int64("moved", st.moved.Load()).Msg("Clients follow the new primary: going on with the shutdown")
}

// PrepareShutdown runs the sequence (see the file comment) and returns
// nil when the caller may go on with the save and the stop. It blocks:
// never call it on an event loop.
func (s *Server) PrepareShutdown(o ShutdownOptions) error {
	st := &s.shut
	st.mu.Lock()
	if st.active {
		// Another SHUTDOWN (or the signal's) is under way: share its fate.
		// If it stops the node, this caller never returns.
		over := st.over
		st.mu.Unlock()
		<-over
		st.mu.Lock()
		err := st.err
		st.mu.Unlock()
		return err
	}
	st.active = true
	st.abort = make(chan struct{})
	st.over = make(chan struct{})
	st.err = nil
	abort := st.abort
	st.mu.Unlock()

	if o.Failover {
		switch h, ok := s.Cluster.(HandOffer); {
		case !ok || !s.clusterMode():
			s.Log.Warn().Msg("Failover on shutdown needs cluster mode: shutting down without it")
		default:
			res := make(chan bool, 1)
			h.HandOff(func(ok bool) { res <- ok })
			select {
			case ok := <-res:
				if ok {
					s.lingerMoved(abort)
					return nil // a replica now: no replica to wait for
				}
			case <-abort:
				return s.aborted()
			}
		}
	}
	if err := s.waitReplicas(o, abort); err != nil {
		return err
	}
	return nil
}

// waitReplicas pauses writes and waits for lagging replicas, unless NOW or
// shutdown-timeout 0.
func (s *Server) waitReplicas(o ShutdownOptions, abort chan struct{}) error {
	timeout := time.Duration(s.Cfg.Int("shutdown-timeout")) * time.Second
	if o.Now || timeout <= 0 || s.Repl == nil || s.Repl.IsReplica() {
		return nil
	}
	n := s.connectedReplicas()
	if n == 0 {
		return nil
	}
	acked := make(chan int64, 1)
	s.Repl.Wait(n, 0, true, func(k int64) { acked <- k })
	if <-acked >= n {
		return nil
	}
	s.Log.Info().Msg("Waiting for replicas before shutting down.")
	end := time.Now().Add(timeout)
	s.shut.until.Store(end.UnixMilli())
	defer s.shut.until.Store(0)
	paused := make(chan struct{})
	s.pauseWritesFor(PauseByShutdown, end, func() { close(paused) })
	select {
	case <-paused:
	case <-abort:
		return s.aborted()
	case <-time.After(timeout):
	}
	// As Redis, every round looks at the replicas connected now: one that
	// went away is not waited for.
	for {
		n = s.connectedReplicas()
		left := time.Until(end)
		if n == 0 || left <= 0 {
			break
		}
		cancel := s.Repl.Wait(n, min(left, 100*time.Millisecond), false, func(k int64) { acked <- k })
		select {
		case k := <-acked:
			if k >= n {
				s.Log.Info().Msgf("%d of %d replicas are in sync when shutting down.", n, n)
				return nil
			}
		case <-abort:
			cancel()
			return s.aborted()
		}
	}
	s.logLagging()
	return nil
}

// logLagging logs each replica that did not acknowledge everything, in
// Redis's words, from INFO replication's slaveN lines.
func (s *Server) logLagging() {
	var own int64
	var reps []map[string]string
	for _, kv := range s.Repl.Info() {
		if kv[0] == "master_repl_offset" {
			own, _ = strconv.ParseInt(kv[1], 10, 64)
		}
		if strings.HasPrefix(kv[0], "slave") && strings.Contains(kv[1], "offset=") {
			f := map[string]string{}
			for _, p := range strings.Split(kv[1], ",") {
				if k, v, ok := strings.Cut(p, "="); ok {
					f[k] = v
				}
			}
			reps = append(reps, f)
		}
	}
	lagging := 0
	for _, f := range reps {
		off, _ := strconv.ParseInt(f["offset"], 10, 64)
		if off == own {
			continue
		}
		lagging++
		s.Log.Warn().Msgf("Lagging replica %s:%s reported offset %d behind master, lag=%s, state=%s.", f["ip"],
			f["port"], own-off, f["lag"], f["state"])
	}
	if len(reps) > 0 {
		s.Log.Info().Msgf("%d of %d replicas are in sync when shutting down.", len(reps)-lagging, len(reps))
	}
}

// shutdownIn is INFO's shutdown_in_milliseconds: how long the replica
// wait still has (ok false: no shutdown is waiting).
func (s *Server) shutdownIn() (int64, bool) {
	until := s.shut.until.Load()
	if until == 0 {
		return 0, false
	}
	return max(until-time.Now().UnixMilli(), 0), true
}

// connectedReplicas is INFO replication's connected_slaves.
func (s *Server) connectedReplicas() int64 {
	for _, kv := range s.Repl.Info() {
		if kv[0] == "connected_slaves" {
			n, _ := strconv.ParseInt(kv[1], 10, 64)
			return n
		}
	}
	return 0
}

// aborted ends the sequence after SHUTDOWN ABORT.
func (s *Server) aborted() error {
	s.EndShutdown(ErrShutdownAborted)
	return ErrShutdownAborted
}

// EndShutdown ends a sequence that did not stop the node (a failed save,
// an abort) with err, which the callers that joined it return: writes
// resume.
func (s *Server) EndShutdown(err error) {
	st := &s.shut
	st.mu.Lock()
	if st.active {
		st.active = false
		st.err = err
		close(st.over)
	}
	st.mu.Unlock()
	s.Unpause(PauseByShutdown)
}

// AbortShutdown is SHUTDOWN ABORT: it reports whether a sequence was in
// progress (it then ends with ErrShutdownAborted).
func (s *Server) AbortShutdown() bool {
	st := &s.shut
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.active || st.abort == nil {
		return false
	}
	select {
	case <-st.abort:
		return false
	default:
	}
	close(st.abort)
	s.Log.Warn().Msg("Shutdown manually aborted.")
	return true
}
