/*
 * A function libmicrohttpd imports, replaced for that library alone.
 *
 * A call from libmicrohttpd to a function of another library goes through a slot of its global
 * offset table, which the dynamic linker fills when the library is loaded. Writing another
 * address into that slot changes what libmicrohttpd calls and nothing else in the process (the
 * interpositions of epoll_batches.c and the others change every library's calls). The slot is
 * found from the library's dynamic section, through its jump-slot relocations; when it lies in
 * the part made read-only after relocation (RELRO, as Debian links), the page is made writable
 * for the store and read-only again.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "epoll_internal.h"

struct search {
    const char *name;
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
        if (strcmp(names + symbols[ELF64_R_SYM(r->r_info)].st_name, search->name) != 0) continue;
        search->slot = (void **)(base + r->r_offset);
        break;
    }
    return 1;
}

void *hearth_replace_libmicrohttpd_import(const char *name, void *replacement) {
#if defined(__x86_64__)
    struct search search = {.name = name};
    dl_iterate_phdr(find_slot, &search);
    if (search.slot == NULL) return NULL;
    uintptr_t page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    void *page = (void *)((uintptr_t)search.slot & ~(page_size - 1));
    int read_only = (uintptr_t)search.slot >= search.relro_start && (uintptr_t)search.slot < search.relro_end;
    if (read_only && mprotect(page, page_size, PROT_READ | PROT_WRITE) != 0) return NULL;
    /* Aligned pointer loads and stores: a polling thread calling through the slot meanwhile (a
     * server already running) gets one function or the other. */
    void *original = atomic_load_explicit((_Atomic(void *) *)search.slot, memory_order_acquire);
    atomic_store_explicit((_Atomic(void *) *)search.slot, replacement, memory_order_release);
    if (read_only) mprotect(page, page_size, PROT_READ);
    return original;
#else
    (void)name;
    (void)replacement;
    return NULL;
#endif
}
