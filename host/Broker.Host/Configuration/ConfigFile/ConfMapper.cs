using Broker.Core;
using Broker.Host.Configuration.Conf;
using Broker.Host.Configuration.ConfigFile.Internal;

namespace Broker.Host.Configuration.ConfigFile;

/// <summary>
/// Maps a nats-server configuration file (a parsed <see cref="ConfMap"/>) onto configuration keys: broker settings
/// into the <c>Broker</c> section (<see cref="BrokerOptions"/> and <see cref="BrokerHostOptions"/> names), the blocks
/// and keys the loaded plugins read (<see cref="PluginBlocks"/>: <c>tls</c>, <c>websocket</c>, <c>mqtt</c>, a third
/// party's <c>&lt;id&gt; { }</c>) verbatim into their <c>Plugins:&lt;Id&gt;</c> sections. The result is one layer of the
/// host configuration.
/// </summary>
/// <remarks>
/// <para>Follows nats-server's <c>opts.go processConfigFileLine</c>: the same keys and aliases (case-insensitive),
/// the same value types (a wrong type is Go's <c>interface conversion</c> message), the same error texts, every
/// error at the key it concerns. All problems are collected, not just the first, as nats-server reports them.</para>
/// <para>Unknown keys are errors unless the key served as a <c>$variable</c>. Keys of features this broker does not
/// have yet (JetStream, clustering, MQTT, ...) are accepted with one notice per feature unless a plugin reads them;
/// security settings it cannot enforce (operator/JWT mode, auth callout, OCSP, ...) and the keys of an account it does not
/// build yet (imports, exports, JetStream, mappings) are errors, so a broker never runs less protected or routes
/// differently than its file says; so are the blocks of the broker's own plugins (<c>tls</c>, <c>websocket</c>) when
/// that plugin is not loaded.</para>
/// <para>This class walks the top-level keys and hands each to the collaborator that reads it, in this order: the
/// server's own settings (<see cref="ServerSettingsMapper"/>), authorization (<see cref="AuthorizationMapper"/>) and
/// accounts (<see cref="AccountsMapper"/>), both reading users with <see cref="UsersMapper"/> and
/// <see cref="PermissionsMapper"/> and checking them across the file with <see cref="ConfiguredUsers"/>, a loaded
/// plugin's key (<see cref="PluginBlockMapper"/>), refused security settings (<see cref="SecurityRefusals"/>), an
/// unloaded first-party plugin's key, a feature the broker lacks
/// (<see cref="IgnoredFeatures"/>); anything else is unknown. All of them read values through one
/// <see cref="ConfValueReader"/> and write to one <see cref="ConfMappingBuilder"/>.</para>
/// </remarks>
internal sealed class ConfMapper
{
    private readonly PluginBlocks plugins;
    private readonly ConfMappingBuilder output = new();
    private readonly ConfValueReader reader;
    private readonly ServerSettingsMapper server;
    private readonly AuthorizationMapper authorization;
    private readonly AccountsMapper accounts;
    private readonly MappingsMapper mappings;
    private readonly PluginBlockMapper pluginBlocks;
    private readonly SecurityRefusals refusals;
    private readonly OperatorMapper operators;
    private readonly LeafNodesMapper leafNodes;
    private readonly ClusterMapper cluster;
    private readonly IgnoredFeatures ignored = new();

    // The top-level mappings block that is the global account's: nats-server keeps the last one with mappings.
    private ConfEntry? globalMappings;

    private ConfMapper(PluginBlocks plugins)
    {
        this.plugins = plugins;
        reader = new ConfValueReader(output);
        server = new ServerSettingsMapper(reader, output);
        var permissions = new PermissionsMapper(reader, output);
        var users = new UsersMapper(reader, output, permissions);
        var known = new ConfiguredUsers();
        authorization = new AuthorizationMapper(reader, output, users, permissions, known);
        mappings = new MappingsMapper(reader, output);
        accounts = new AccountsMapper(reader, output, users, permissions, known, mappings);
        pluginBlocks = new PluginBlockMapper(reader, output, plugins);
        refusals = new SecurityRefusals(reader);
        operators = new OperatorMapper(reader, output);
        leafNodes = new LeafNodesMapper(reader, output, permissions, ignored);
        cluster = new ClusterMapper(reader, output, authorization, permissions, leafNodes);
    }

    /// <summary>Reads and maps a configuration file; a file that cannot be parsed gives one error.</summary>
    /// <param name="path">The file, as named on the command line.</param>
    /// <param name="plugins">The blocks and keys the loaded plugins read; <see cref="PluginBlocks.None"/> when none.</param>
    /// <param name="environment">Looks up environment variables for <c>$name</c>.</param>
    /// <returns>The keys and diagnostics.</returns>
    public static ConfMapping MapFile(string path, PluginBlocks plugins, Func<string, string?>? environment = null)
    {
        ArgumentNullException.ThrowIfNull(path);
        ConfMap root;
        try
        {
            root = ConfParser.ParseFile(path, environment);
        }
        catch (ConfException ex)
        {
            return new ConfMapping(path, new Dictionary<string, string?>(), [new ConfDiagnostic(ConfDiagnosticKind.Error, ex.Position, ex.Reason)]);
        }

        return Map(root, path, plugins);
    }

    /// <summary>Maps a parsed document.</summary>
    /// <param name="root">The document.</param>
    /// <param name="file">The file name, for diagnostics that concern the whole file.</param>
    /// <param name="plugins">The blocks and keys the loaded plugins read; <see cref="PluginBlocks.None"/> when none.</param>
    /// <returns>The keys and diagnostics.</returns>
    public static ConfMapping Map(ConfMap root, string file, PluginBlocks plugins)
    {
        ArgumentNullException.ThrowIfNull(root);
        ArgumentNullException.ThrowIfNull(plugins);
        var mapper = new ConfMapper(plugins);
        mapper.globalMappings = root.Entries.LastOrDefault(e => MappingsMapper.Reads(e.Key) && e.Value is ConfMap { Count: > 0 });
        if (root.Count == 0)
        {
            mapper.output.Warning(null, $"{file}: config has no values or is empty");
        }

        foreach (var entry in root.Entries)
        {
            mapper.MapTopLevel(entry);
        }

        mapper.ignored.Report(mapper.output);
        return mapper.output.Build(file);
    }

    /// <summary>
    /// Whether the broker reads a top-level key itself (its own settings, and the security settings it refuses), so no
    /// plugin may claim it.
    /// </summary>
    /// <param name="key">The key, any letter case.</param>
    /// <returns><see langword="true"/> for the broker's keys.</returns>
    public static bool IsBrokerKey(string key) =>
        ServerSettingsMapper.Reads(key) || AuthorizationMapper.Reads(key) || AccountsMapper.Reads(key) || MappingsMapper.Reads(key) || SecurityRefusals.Reads(key)
        || OperatorMapper.Reads(key) || LeafNodesMapper.Reads(key) || ClusterMapper.Reads(key);

    private void MapTopLevel(ConfEntry entry)
    {
        if (server.TryMap(entry) || authorization.TryMap(entry) || accounts.TryMap(entry) || operators.TryMap(entry))
        {
            return;
        }

        if (LeafNodesMapper.Reads(entry.Key))
        {
            leafNodes.Map(entry);
            return;
        }

        if (ClusterMapper.Reads(entry.Key))
        {
            cluster.Map(entry);
            return;
        }

        if (MappingsMapper.Reads(entry.Key))
        {
            // The global account's; only the block nats-server keeps is written, every one is checked.
            mappings.Map(entry, ConfKeys.Key(nameof(BrokerOptions.Mappings)), 0, write: ReferenceEquals(entry, globalMappings));
            return;
        }

        if (plugins.TryGet(entry.Key, out var block))
        {
            pluginBlocks.Map(entry, block);
            return;
        }

        if (!refusals.TryMap(entry) && !pluginBlocks.TryRefuseUnloaded(entry) && !ignored.TryIgnore(entry))
        {
            reader.Unknown(entry);
        }
    }
}
