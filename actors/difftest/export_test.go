package difftest

// DumpValid exposes dumpValid to the external tests.
var DumpValid = dumpValid
