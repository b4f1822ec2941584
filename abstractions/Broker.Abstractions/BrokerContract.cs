namespace Broker.Abstractions;

/// <summary>
/// The version of the plugin contract this assembly defines.
/// </summary>
/// <remarks>
/// A plugin compiled against contract <c>X.Y</c> loads into a host whose contract has major version <c>X</c>
/// and a minor version of at least <c>Y</c>. Adding members raises the minor version; removing or changing
/// one raises the major version. The value equals this assembly's <see cref="System.Reflection.AssemblyName.Version"/>.
/// </remarks>
public static class BrokerContract
{
    /// <summary>The contract version implemented by this build of <c>Broker.Abstractions</c>.</summary>
    public static Version Version { get; } = typeof(BrokerContract).Assembly.GetName().Version is { } v
        ? new Version(v.Major, v.Minor)
        : new Version(1, 0);

    /// <summary>
    /// Whether a plugin that needs <paramref name="required"/> can run against <paramref name="provided"/>:
    /// same major version and a provided minor version at least as high.
    /// </summary>
    /// <param name="required">The contract version the plugin needs.</param>
    /// <param name="provided">The contract version the host provides.</param>
    /// <returns><see langword="true"/> when the plugin can be loaded.</returns>
    public static bool IsCompatible(Version required, Version provided)
    {
        ArgumentNullException.ThrowIfNull(required);
        ArgumentNullException.ThrowIfNull(provided);
        return required.Major == provided.Major && required.Minor <= provided.Minor;
    }
}
