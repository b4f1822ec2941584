namespace Broker.Abstractions;

/// <summary>
/// Marks an assembly as a broker plugin and names its startup type, which must implement
/// <see cref="IBrokerPlugin"/> and have a public parameterless constructor.
/// </summary>
/// <example><c>[assembly: BrokerPlugin(typeof(MyPlugin), Id = "my-protocol", Version = "1.2.0")]</c></example>
[AttributeUsage(AttributeTargets.Assembly, AllowMultiple = false)]
public sealed class BrokerPluginAttribute : Attribute
{
    /// <summary>Creates the attribute.</summary>
    /// <param name="startupType">The type implementing <see cref="IBrokerPlugin"/>.</param>
    public BrokerPluginAttribute(Type startupType)
    {
        StartupType = startupType;
    }

    /// <summary>The type implementing <see cref="IBrokerPlugin"/>.</summary>
    public Type StartupType { get; }

    /// <summary>
    /// The plugin id: its configuration section <c>Plugins:&lt;Id&gt;</c>, the name of its block in a nats-server
    /// configuration file (any letter case) and its name in logs. Defaults to the assembly's simple name.
    /// </summary>
    public string? Id { get; set; }

    /// <summary>The plugin's own version (<c>major.minor[.build]</c>). Defaults to the assembly version.</summary>
    public string? Version { get; set; }

    /// <summary>
    /// The lowest contract version the plugin needs (<c>major.minor</c>). Defaults to the version of
    /// <c>Broker.Abstractions</c> the plugin was compiled against.
    /// </summary>
    public string? MinimumContractVersion { get; set; }

    /// <summary>
    /// Other names of the plugin's block in a nats-server configuration file (contract 1.1). A top-level block named
    /// like the <see cref="Id"/> (any letter case: <c>line { }</c> for id <c>Line</c>) or like one of these aliases
    /// becomes the plugin's section <c>Plugins:&lt;Id&gt;</c>, nested blocks and arrays intact. Default none.
    /// </summary>
    /// <example><c>ConfigurationAliases = ["ws"]</c>: <c>ws { }</c> configures the plugin with id <c>WebSocket</c>.</example>
#pragma warning disable CA1819 // Attribute arguments can only be arrays.
    public string[]? ConfigurationAliases { get; set; }

    /// <summary>
    /// Other top-level keys of a nats-server configuration file the plugin reads (contract 1.1): each, with its value,
    /// is copied into the plugin's section as <c>Plugins:&lt;Id&gt;:&lt;key&gt;</c>. Default none.
    /// </summary>
    /// <example><c>ConfigurationKeys = ["allow_non_tls"]</c>: the TLS plugin reads <c>Plugins:Tls:allow_non_tls</c>.</example>
    public string[]? ConfigurationKeys { get; set; }

    /// <summary>
    /// Whether the host loads the plugin only when the configuration uses it (contract 1.4). <see langword="null"/>,
    /// the default: the plugin is always loaded, as before 1.4. Any array, empty included: the host loads the plugin
    /// only when its section <c>Plugins:&lt;Id&gt;</c> or one of these configuration paths is present in the built
    /// configuration (a value, even empty, or any key below it; every source counts: a configuration file's block,
    /// <c>appsettings.json</c>, <c>BROKER_</c> variables, flags). Otherwise the plugin's assembly is not loaded at all:
    /// no load context, no <see cref="IBrokerPlugin.ConfigureServices"/>. The host reads this attribute from the
    /// assembly's metadata, so declare it only for a plugin that does nothing while unconfigured.
    /// </summary>
    /// <remarks>
    /// A path is a configuration key with <c>:</c> between sections, compared without regard to letter case; a segment
    /// <c>*</c> stands for any one section name. Name what else the plugin serves: a storage plugin names
    /// <c>Plugins:JetStream</c>, the TLS plugin any listener's <c>tls</c> block (<c>Plugins:*:tls</c>).
    /// </remarks>
    /// <example><c>ActivationKeys = ["Plugins:WebSocket"]</c>: the MQTT plugin is loaded for <c>mqtt { }</c> or for
    /// a WebSocket listener, whose <c>/mqtt</c> path it serves.</example>
    public string[]? ActivationKeys { get; set; }
#pragma warning restore CA1819
}
