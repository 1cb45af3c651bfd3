package command

import "errors"

// Error replies that more than one layer produces or recognises.
var (
	// ErrBGSaveInProgress is the reply to SAVE/BGSAVE while a background
	// save runs.
	ErrBGSaveInProgress = errors.New("ERR Background save already in progress")
)

// ErrBusyScript is the reply to commands while a script runs past
// lua-time-limit.
const ErrBusyScript = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
