/* procs: what record learns about the target processes while they live.
 *
 * Modules: every executable mapping of a target (from /proc/PID/maps when
 * attaching, then from PERF_RECORD_MMAP2 as processes map more), with the
 * file's build-id and the load bias computed from its program headers, so
 * that report needs nothing from the live process.
 *
 * Bases for the perf backend, which cannot read them from the kernel:
 *   - main thread: mm->start_stack (/proc/PID/stat field 28), read when the
 *     process is first seen and again after exec;
 *   - other threads: the fs base itself, read once per thread with ptrace
 *     (thread_pointer.h) when its first sample is read.  A thread that ended
 *     before that gets the end of the anonymous mapping holding SP minus the
 *     process's offset (end of a glibc stack mapping - fs base, learnt from a
 *     thread that was read), when that offset is one for every thread;
 *     otherwise no base (reported as missing), never a guess.
 */
#ifndef ICPP_PROCS_H
#define ICPP_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector/samplefile.h"

struct procs;

struct procs *procs_new(struct sample_set *out);
void procs_free(struct procs *p);

/* A process to follow; parent 0 for a root.  Reads /proc/PID/maps and stat
 * when `scan` (attach), and its comm. */
void procs_add(struct procs *p, uint32_t tgid, uint32_t parent, bool scan);
bool procs_has(const struct procs *p, uint32_t tgid);
/* A followed process forked child: the child starts with the parent's
 * modules and start_stack (it runs the same image until it execs). */
void procs_fork(struct procs *p, uint32_t child, uint32_t parent);
/* The process exec'd: its old modules stay (earlier samples need them), the
 * new ones come as mmaps; start_stack is read again. */
void procs_exec(struct procs *p, uint32_t tgid, const char *comm);
/* A mapping was made (PERF_RECORD_MMAP2).  build_id may be NULL. */
void procs_mmap(struct procs *p, uint32_t tgid, uint64_t start, uint64_t len, uint64_t pgoff,
		uint32_t prot, const char *filename, const uint8_t *build_id, uint32_t build_id_len);
/* Read /proc/PID/maps again (a late look for a process we might have missed). */
void procs_rescan(struct procs *p, uint32_t tgid);

/* Perf backend bases.  0 when unknown. */
uint64_t procs_start_stack(struct procs *p, uint32_t tgid);
/* The base of a sample's thread (pathmap/thread_base.h): start_stack when sp
 * is on the initial stack (*initial_stack set), else the thread's fs base. */
uint64_t procs_base(struct procs *p, uint32_t tgid, uint32_t tid, uint64_t sp, bool *initial_stack);
/* Process tgid made thread tid (PERF_RECORD_FORK): a tid seen before is a
 * new thread now; the process's first one is read at once, while it lives. */
void procs_new_thread(struct procs *p, uint32_t tgid, uint32_t tid);
/* Copy each process's fs-base facts (offset, SF_P_* flags) into the sample
 * set, before it is written. */
void procs_store_threads(struct procs *p);

/* Build-id and load bias of a file mapped at start with file offset pgoff:
 * 0 on success (build_id_len may be 0), -1 when the file is no ELF. */
int elf_mapping_info(const char *path, uint64_t start, uint64_t pgoff, uint64_t *bias,
		     uint8_t *build_id, uint32_t *build_id_len);

#endif
