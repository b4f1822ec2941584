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
#pragma warning restore CA1819
}
