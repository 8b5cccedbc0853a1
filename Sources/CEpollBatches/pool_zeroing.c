/*
 * libmicrohttpd's clearing of a connection's memory pool skipped.
 *
 * Between two requests of a kept-alive connection, MHD_pool_reset (libmicrohttpd 0.9.75,
 * memorypool.c) zeroes the whole pool but the bytes it keeps: with the server's 28 KiB pool, a
 * 28 KiB memset per request, about 2.4% of the echo callable's CPU in a profile. Its source says
 * the zeroing is "technically not needed, but safer". MHD_pool_reallocate zeroes a block it
 * shrinks or moves away from in the same way; those are the library's only calls to memset.
 *
 * Nothing in 0.9.75 relies on the zeroes: a pool of 32 KiB or less is allocated with malloc and
 * never cleared, so the first request of every connection already runs on memory that held
 * whatever the allocator last put there (often an earlier connection's requests); every block taken
 * from a pool is written before it is read (the received headers' entries, all fields read, the
 * response's iovec and the cookie copy by memcpy, the read and write buffers only up to their
 * offsets).
 *
 * So the library's memset is replaced, in its own global offset table only, by a function that
 * skips a zeroing and does anything else (never called) as glibc would. Nothing else in the
 * process is touched. ServerCore installs it only for 0.9.75, where its call sites were read off
 * the machine code: three, all the pool's zeroing.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <pthread.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "CEpollBatches.h"

static _Atomic unsigned long zeroings_skipped;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int installed;

static void *pool_memset(void *s, int c, size_t n) {
    if (c != 0) return memset(s, c, n);
    atomic_fetch_add_explicit(&zeroings_skipped, 1, memory_order_relaxed);
    return s;
}

/* What dl_iterate_phdr finds of libmicrohttpd: the jump slot of memset and the range that is
 * read-only after relocation (RELRO), if any. */
struct search {
    void **slot;
    uintptr_t relro_start, relro_end;
};

/* A dynamic entry's address: glibc stores most of them relocated, but not on every platform. */
static uintptr_t dynamic_address(uintptr_t base, ElfW(Addr) value) {
    return value < base ? base + value : value;
}

static int find_slot(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct search *search = data;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "libmicrohttpd.so") == NULL) return 0;
    uintptr_t base = info->dlpi_addr;
    const ElfW(Dyn) *dynamic = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC) dynamic = (const ElfW(Dyn) *)(base + ph->p_vaddr);
        if (ph->p_type == PT_GNU_RELRO) {
            search->relro_start = base + ph->p_vaddr;
            search->relro_end = base + ph->p_vaddr + ph->p_memsz;
        }
    }
    if (dynamic == NULL) return 1;
    const ElfW(Rela) *relocations = NULL;
    size_t relocations_size = 0;
    const ElfW(Sym) *symbols = NULL;
    const char *names = NULL;
    int rela = 0;
    for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_JMPREL: relocations = (const ElfW(Rela) *)dynamic_address(base, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: relocations_size = d->d_un.d_val; break;
        case DT_SYMTAB: symbols = (const ElfW(Sym) *)dynamic_address(base, d->d_un.d_ptr); break;
        case DT_STRTAB: names = (const char *)dynamic_address(base, d->d_un.d_ptr); break;
        case DT_PLTREL: rela = d->d_un.d_val == DT_RELA; break;
        }
    }
    if (relocations == NULL || symbols == NULL || names == NULL || !rela) return 1;
    for (size_t i = 0; i < relocations_size / sizeof(ElfW(Rela)); i++) {
        const ElfW(Rela) *r = &relocations[i];
        if (ELF64_R_TYPE(r->r_info) != R_X86_64_JUMP_SLOT) continue;
        if (strcmp(names + symbols[ELF64_R_SYM(r->r_info)].st_name, "memset") != 0) continue;
        search->slot = (void **)(base + r->r_offset);
        break;
    }
    return 1;
}

static void install(void) {
#if defined(__x86_64__)
    struct search search = {0};
    dl_iterate_phdr(find_slot, &search);
    if (search.slot == NULL) return;
    uintptr_t page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    void *page = (void *)((uintptr_t)search.slot & ~(page_size - 1));
    int read_only = (uintptr_t)search.slot >= search.relro_start && (uintptr_t)search.slot < search.relro_end;
    if (read_only && mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return;
    /* An aligned pointer store: a polling thread calling through the slot meanwhile (another
     * server of the process) gets one function or the other, both correct. */
    atomic_store_explicit((_Atomic(void *) *)search.slot, (void *)pool_memset, memory_order_release);
    if (read_only) mprotect(page, page_size, PROT_READ);
    installed = 1;
#endif
}

int hearth_skip_pool_zeroing(void) {
    pthread_once(&install_once, install);
    return installed;
}

unsigned long hearth_pool_zeroings_skipped(void) {
    return atomic_load_explicit(&zeroings_skipped, memory_order_relaxed);
}
