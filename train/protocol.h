/* The contract between `icpp train` (the parent) and its runtime library,
 * libicpp-train.so, preloaded into every process of the trained program.
 *
 * Why two sides: the runtime must not change what it measures.  A library
 * with thread-local storage (libelf, libdw) preloaded into the target would
 * grow glibc's static TLS block and move every thread's stack relative to its
 * fs base (method.md), so the runtime links only libc and Capstone (neither
 * has TLS).  All ELF/DWARF analysis happens in the parent, which answers the
 * runtime's questions over a unix socket.
 *
 * 1. Analysis.  For each module it finds (at start-up, and after each dlopen),
 *    the runtime connects to ICPP_TRAIN_SOCKET, sends a train_request and
 *    reads a train_reply followed by nsites train_site records: where each
 *    function starts and which bytes to displace for its hook.
 * 2. Recording.  Each process image (a fork child, an exec'd image) writes a
 *    record file ICPP_TRAIN_DIR/proc.<pid>.<n>: a rec_header, then
 *    REC_MAX_MODULES rec_module slots, then rec_node records.  The file is a
 *    shared mapping, so whatever the process does (exit, _exit, a crash,
 *    SIGKILL, exec) what it recorded is already in the file.  The parent reads
 *    every record file once all processes have ended and builds the pathmap.
 *    A node becomes valid when its `valid` word is REC_NODE_VALID (written
 *    last); its entries count is updated by its owning thread only.
 */
#ifndef ICPP_TRAIN_PROTOCOL_H
#define ICPP_TRAIN_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#define ICPP_ENV_SOCKET "ICPP_TRAIN_SOCKET"
#define ICPP_ENV_DIR "ICPP_TRAIN_DIR"
#define ICPP_RUNTIME_NAME "libicpp-train.so"

#define TRAIN_PATH_MAX 1024

/* ---- analysis ---- */

#define TRAIN_REQ_MAGIC 0x31514552u   /* "REQ1" */
struct train_request {
	uint32_t magic;
	uint32_t path_len;                /* bytes of path that follow, no NUL */
};

/* Why a function was not hooked (counted per module, printed by train). */
enum train_skip {
	SKIP_TOO_SHORT,                   /* fewer than 5 bytes to displace */
	SKIP_BRANCH_TARGET,               /* a jump lands inside the displaced bytes */
	SKIP_UNRELOCATABLE,               /* an instruction cannot move (loop, ...) */
	SKIP_ENTRY_CFA,                   /* CFI at the entry is not rsp+k (PLT, sigreturn) */
	SKIP_UNDECODABLE,                 /* Capstone cannot decode the entry */
	SKIP_CODE_MISMATCH,               /* memory differs from the file (runtime) */
	SKIP_NO_TRAMPOLINE_SPACE,         /* no memory within rel32 reach (runtime) */
	SKIP_NREASONS
};
extern const char *const train_skip_names[SKIP_NREASONS];

struct train_reply {
	int32_t status;                   /* 0 ok; else error text follows in `error` */
	uint32_t nsites;                  /* train_site records that follow */
	uint32_t functions_found;
	uint32_t skipped[SKIP_NREASONS];
	/* The signal trampoline a handler returns to (glibc's __restore_rt:
	 * CFI with the 'S' augmentation), ELF vaddrs; lo == hi when none.  A
	 * function entered with its return address - 1 in here is a signal
	 * handler: heights under it depend on where the kernel aligned the
	 * signal frame, so training counts them and records nothing. */
	uint64_t sigtramp_lo, sigtramp_hi;
	char error[256];
};

#define SITE_PAD 1u                       /* the jmp may extend into alignment padding */
#define SITE_REALIGN 2u                   /* realigns SP beyond 16: heights of its
					   * callees depend on the base's alignment */
#define SITE_CFA_RBP 4u                   /* CFA = rbp + cfa_offset at the entry (a
					   * .cold fragment of a frame-pointer function) */
#define SITE_FRAGMENT 8u                  /* a .cold fragment: jumped to with its
					   * owner's frame built (entry CFA not
					   * rsp+8, a branch target of its module);
					   * it runs in its owner's activation */
#define SITE_ISLAND 16u                   /* a 2-byte jmp (rel8) at the entry to a
					   * 5-byte jmp in the alignment padding
					   * before the function, at patch + island:
					   * a branch lands 2 to 4 bytes in, or the
					   * function is shorter than 5 bytes */
struct train_site {
	uint64_t addr;                    /* ELF vaddr of the function */
	uint16_t patch_off;               /* bytes kept at the entry (endbr64: 4) */
	uint16_t patch_len;               /* bytes of whole instructions displaced */
	uint16_t flags;                   /* SITE_* */
	/* CFA = SP (or rbp, SITE_CFA_RBP) + cfa_offset at the entry, from the
	 * CFI: SP + 8 for a called function, more for one entered with its
	 * frame partly built (ld.so's lazy-binding resolver after the PLT's
	 * pushes, a gcc .cold fragment jumped to inside its parent's frame).
	 * The return address is at CFA - 8. */
	uint16_t cfa_offset;
	int16_t island;                   /* SITE_ISLAND: the island's address
					   * minus the patch's (negative) */
};

/* Whole reads and writes on the socket (fdio.c); -1 on error, end of
 * file, or no data for timeout_ms (-1: wait). */
int train_write_full(int fd, const void *buf, size_t len);
int train_read_full(int fd, void *buf, size_t len, int timeout_ms);

/* ---- recording ---- */

#define REC_MAGIC "ICPPREC1"
#define REC_MAX_MODULES 2048
#define REC_NODE_VALID 0x4e4f4445u        /* "NODE" */
#define REC_NONE UINT32_MAX

/* Heights outside [REC_HEIGHT_MIN, REC_HEIGHT_MAX] mean SP is not on the
 * thread's stack (sigaltstack, a coroutine): counted, never recorded. */
#define REC_HEIGHT_MIN (-4096)
#define REC_HEIGHT_MAX (1ll << 32)

struct rec_header {
	char magic[8];
	uint32_t header_size, module_size, node_size;   /* layout check */
	uint32_t pid;
	uint64_t start_stack;             /* the main thread's base */
	uint32_t nmodules;                /* slots in use */
	uint32_t pad;
	uint64_t nnodes;                  /* nodes allocated (some may be invalid) */
	uint64_t max_nodes;
	/* What was not recorded, and why (printed by train). */
	uint64_t off_stack;               /* entries with SP off the thread's stack */
	uint64_t nested;                  /* entries while the runtime itself ran */
	uint64_t too_deep;                /* entries past the shadow stack's depth */
	uint64_t in_signal;               /* entries in signal handlers (not recorded) */
	uint64_t in_realign;              /* entries under a realigned frame (not recorded) */
	uint64_t nodes_full;              /* entries after the node log filled up */
	uint64_t threads;
};

struct rec_module {
	uint64_t start, end;              /* runtime address range of its PT_LOADs */
	uint64_t bias;                    /* runtime address - ELF vaddr */
	uint32_t functions_found, functions_hooked;
	uint32_t skipped[SKIP_NREASONS];
	uint32_t unloaded;                /* dlclose'd: the range may be reused */
	uint32_t own;                     /* the runtime or its Capstone: paths called
					   * from here exist only under training */
	char path[TRAIN_PATH_MAX];
};

struct rec_node {
	uint32_t parent;                  /* node index, REC_NONE for a thread root */
	uint32_t module;                  /* module slot of the function */
	uint64_t func;                    /* ELF vaddr of the function */
	uint64_t ra;                      /* return address (runtime) */
	int64_t height;                   /* base - CFA */
	uint64_t entries;
	/* base - rbp at the entry that created the node: in frame-pointer code
	 * the caller's rbp, so that the collector can evaluate a caller's
	 * rbp-based CFA rule (collect.c true_parent). */
	int64_t rbp_off;
	uint32_t valid;                   /* REC_NODE_VALID once the fields are written */
	uint32_t pad;
};

#define REC_MODULES_OFFSET 4096
#define REC_NODES_OFFSET (REC_MODULES_OFFSET + REC_MAX_MODULES * sizeof(struct rec_module))

#endif
