package difftest

// Internals the external tests check against payloads of a real server.
var (
	DumpValid  = dumpValid
	DumpIntset = dumpIntset
	DumpItems  = dumpItems
)
