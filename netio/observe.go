package netio

// ClientStats are the client-side counters of INFO clients and stats, for
// the metrics endpoint (netio/metrics).
type ClientStats struct {
	Clients, Blocked, MaxClients                  int64
	ConnsReceived, RejectedConns                  int64
	NetInput, NetOutput, ErrorReplies, Commands   int64
	PubSubChannels, PubSubPatterns, ShardChannels int64
}

// ClientStats reads the counters: atomic loads, plus one pass over the
// client list for the command count (as INFO does).
func (s *Server) ClientStats() ClientStats {
	st := &s.stats
	return ClientStats{
		Clients:        st.clients.Load(),
		Blocked:        s.shards.BlockedClients() + s.shut.waiting.Load(),
		MaxClients:     s.maxClients.Load(),
		ConnsReceived:  st.connsReceived.Load(),
		RejectedConns:  st.rejectedConns.Load(),
		NetInput:       st.netInput.Load(),
		NetOutput:      st.netOutput.Load(),
		ErrorReplies:   s.cmdStats.TotalErrors(),
		Commands:       s.TotalCommands(),
		PubSubChannels: int64(s.ps.count(psChannel)),
		PubSubPatterns: int64(s.ps.count(psPattern)),
		ShardChannels:  int64(s.ps.count(psShard)),
	}
}
