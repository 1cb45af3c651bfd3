package cluster

import (
	"time"

	"github.com/slotd/slotd/netio/resp"
)

// execSetSlot serves CLUSTER SETSLOT slot IMPORTING|MIGRATING|NODE id and
// SETSLOT slot STABLE (bus.State.SetSlot has the rules). The reply goes out
// after nodes.conf is saved and the new routing table is published, so a
// client told +OK sees the open slot (ASK/ASKING) on its next command.
func (a *clusterActor) execSetSlot(w *resp.Writer, args [][]byte) {
	keys := a.slotKeys
	if keys == nil {
		keys = func(int) int64 { return 0 }
	}
	epoch, current := a.st.Myself().ConfigEpoch, a.st.CurrentEpoch()
	if err := a.st.SetSlot(time.Now().UnixMilli(), args[2:], keys); err != nil {
		w.Error(err.Error())
		return
	}
	// Redis fsyncs nodes.conf only for epoch changes (a closed import
	// bumps the configEpoch); other SETSLOTs are saved without it.
	me := a.st.Myself()
	a.lazySave = epoch == me.ConfigEpoch && current == a.st.CurrentEpoch() && !me.IsReplica()
	w.OK()
}
