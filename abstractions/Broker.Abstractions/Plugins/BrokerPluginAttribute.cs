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
    /// The plugin id: its folder name under <c>plugins/</c> and its configuration section <c>Plugins:&lt;Id&gt;</c>.
    /// Defaults to the assembly's simple name.
    /// </summary>
    public string? Id { get; set; }

    /// <summary>The plugin's own version (<c>major.minor[.build]</c>). Defaults to the assembly version.</summary>
    public string? Version { get; set; }

    /// <summary>
    /// The lowest contract version the plugin needs (<c>major.minor</c>). Defaults to the version of
    /// <c>Broker.Abstractions</c> the plugin was compiled against.
    /// </summary>
    public string? MinimumContractVersion { get; set; }
}
