#include "train/protocol.h"

const char *const train_skip_names[SKIP_NREASONS] = {
	[SKIP_TOO_SHORT] = "too short",
	[SKIP_BRANCH_TARGET] = "branch target in entry",
	[SKIP_UNRELOCATABLE] = "unrelocatable entry",
	[SKIP_ENTRY_CFA] = "entry is not a call target (CFI)",
	[SKIP_UNDECODABLE] = "undecodable entry",
	[SKIP_CODE_MISMATCH] = "code differs from file",
	[SKIP_NO_TRAMPOLINE_SPACE] = "no trampoline space",
};
