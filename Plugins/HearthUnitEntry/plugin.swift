import PackagePlugin

/// Generates each unit's entry point: the one C symbol (`hearth_unit_entry`) the host looks up after
/// `dlopen`, exporting the unit's `FunctionModule`. A unit target lists this plugin and contains
/// nothing else but its module; `swift build` runs the generator (offline, inside the package).
@main
struct HearthUnitEntry: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let generator = try context.tool(named: "hearth-unit-entry")
        let sources = module.sourceFiles(withSuffix: "swift").map(\.url)
        let output = context.pluginWorkDirectoryURL.appending(path: "HearthUnitEntry.swift")
        return [.buildCommand(displayName: "Generating the unit entry point of \(target.name)", executable: generator.url,
                              arguments: [target.name, output.path] + sources.map(\.path), inputFiles: sources, outputFiles: [output])]
    }
}
