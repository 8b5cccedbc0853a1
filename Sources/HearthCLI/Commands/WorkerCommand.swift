import HearthRuntime

/// `hearth worker`: runs one unit library for a host (started by the host, not by hand).
struct WorkerCommand: Command {
    static let path = ["worker"]
    static let summary = "Run one unit for a host over a socket (the host starts it)"
    static let help = """
        usage: hearth worker --unit NAME --library PATH [--fd N] [--write-fd N] [--memory-limit-mb N] [--open-files N] [--boundary-version N]

        Loads the unit library and serves the host that started it over the Unix socket on
        descriptor N (default 3), until the host closes it. `hearth serve` starts one or more
        workers per unit in process isolation; a trap in a handler kills the worker, not the host.
          --write-fd N         answer on this descriptor's socket instead (the host gives each
                               direction a socket pair of its own)
          --memory-limit-mb N  address-space limit (RLIMIT_AS) in MiB, 0 for none
          --open-files N       open-file limit (RLIMIT_NOFILE), 0 to leave it
          --boundary-version N the host's boundary version: exit 71 if this binary speaks another
        """

    var options: WorkerMain.Options

    static func parse(_ arguments: [String]) throws(UsageError) -> WorkerCommand {
        let args = try Arguments(arguments, valued: ["unit", "library", "fd", "write-fd", "memory-limit-mb", "open-files", "boundary-version"])
        _ = try args.requirePositionals([])
        guard let unit = args.value("unit") else { throw UsageError("missing --unit") }
        guard let library = args.value("library") else { throw UsageError("missing --library") }
        let fd = try args.int("fd") ?? 3
        guard (0...65535).contains(fd) else { throw UsageError("--fd must be a descriptor number (got \(fd))") }
        let writeFD = try args.int("write-fd")
        if let writeFD, !(0...65535).contains(writeFD) { throw UsageError("--write-fd must be a descriptor number (got \(writeFD))") }
        let memory = try args.int("memory-limit-mb") ?? 0
        guard (0...(1 << 22)).contains(memory) else { throw UsageError("--memory-limit-mb must be between 0 and \(1 << 22) (got \(memory))") }
        let files = try args.int("open-files") ?? 0
        guard (0...(1 << 20)).contains(files) else { throw UsageError("--open-files must be between 0 and \(1 << 20) (got \(files))") }
        let version = try args.int("boundary-version")
        if let version, UInt32(exactly: version) == nil { throw UsageError("--boundary-version must be a version number (got \(version))") }
        return WorkerCommand(options: WorkerMain.Options(unit: unit, library: library, fd: Int32(fd), writeFD: writeFD.map { Int32($0) }, memoryLimitMB: memory, openFiles: files,
                                                         boundaryVersion: version.flatMap { UInt32(exactly: $0) }))
    }

    func run(_ io: CommandIO) async -> Int32 {
        await WorkerMain.run(options)
    }
}
