#ifndef HEARTH_UNIT_ABI_H
#define HEARTH_UNIT_ABI_H
/*
 * The boundary between the Hearth host and a unit (a handler module built as lib<Unit>.so).
 *
 * Only bytes cross it. Every message is one frame of the boundary schema defined in
 * HearthModel/Boundary (Frame.swift): a length, a kind (request, reply, failure), an operation
 * number, the invocation id and a call id, then the message in its compact encoding. The same
 * frames travel over a Unix socket to a worker process and into recordings; nothing here depends
 * on the two sides sharing an address space beyond the call itself.
 *
 * Lifetimes: the callee copies `bytes` before returning from any function below; a reply's
 * bytes are valid only during the reply call. Each reply function is called exactly once per
 * request, on any thread, possibly before the request call returns.
 *
 * Versioning: HEARTH_UNIT_ABI_VERSION (= Boundary.version) changes whenever a struct below, a
 * frame or a message's encoding changes. Every unit links its own copy of
 * hearth_unit_abi_version(); the host calls the unit's copy (dlsym on the unit's handle) before
 * anything else and refuses a unit of another version, naming both versions.
 */
#include <stddef.h>
#include <stdint.h>

#define HEARTH_UNIT_ABI_VERSION 2u
#define HEARTH_UNIT_ENTRY_SYMBOL "hearth_unit_entry"
#define HEARTH_UNIT_VERSION_SYMBOL "hearth_unit_abi_version"

#ifdef __cplusplus
extern "C" {
#endif

/// Receives the answer to a request. `reply_context` is the pointer the requester passed.
typedef void (*hearth_reply_fn)(void *_Nullable reply_context, const uint8_t *_Nullable bytes, size_t length);

/// Services the host offers a unit: documents, transactions, tasks, auth, messaging, secrets,
/// outbound HTTP, logs and the clock, each a message sent through `call`.
typedef struct hearth_host_services {
    uint32_t abi_version;
    /// Opaque to the unit; passed back on every call.
    void *_Nullable context;
    /// Sends one request message; the host calls `reply(reply_context, ...)` exactly once.
    void (*_Nonnull call)(void *_Nullable context,
                          const uint8_t *_Nonnull request, size_t length,
                          void *_Nullable reply_context, hearth_reply_fn _Nonnull reply);
} hearth_host_services;

/// What a unit exports: its ABI version and one frame handler (describe, invoke, cancel).
/// `context` is the unit's, passed back on every call; it binds the exports to the host that
/// obtained them, so one library loaded by several hosts in a process serves each separately.
typedef struct hearth_unit_exports {
    uint32_t abi_version;
    void *_Nullable context;
    void (*_Nonnull handle)(void *_Nullable context, const uint8_t *_Nonnull request, size_t length,
                            void *_Nullable reply_context, hearth_reply_fn _Nonnull reply);
} hearth_unit_exports;

/// The one symbol a unit exports, named HEARTH_UNIT_ENTRY_SYMBOL. The host keeps `host` alive for
/// the life of the process; the returned exports must stay valid as long. Each call with a
/// different `host` returns exports bound to that host.
typedef const hearth_unit_exports *_Nullable (*hearth_unit_entry_fn)(const hearth_host_services *_Nonnull host);

/// The ABI version this header describes, for Swift code that cannot see the macro.
uint32_t hearth_unit_abi_version(void);

#ifdef __cplusplus
}
#endif
#endif
