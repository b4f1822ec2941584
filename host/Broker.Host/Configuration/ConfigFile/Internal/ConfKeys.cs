using Broker.Core;
using Broker.Core.Auth;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>The configuration keys of the <c>Broker</c> section that the file's settings go to.</summary>
internal static class ConfKeys
{
    /// <summary><c>Broker:a:b</c>, the names being <see cref="BrokerOptions"/> or <see cref="BrokerHostOptions"/> properties.</summary>
    public static string Key(params string[] path) => HostConfiguration.BrokerSection + ":" + string.Join(':', path);

    /// <summary>A <see cref="MonitoringOptions"/> property.</summary>
    public static string Monitoring(string property) => Key(nameof(BrokerOptions.Monitoring), property);

    /// <summary>A key under <see cref="AuthorizationOptions"/>.</summary>
    public static string Authorization(params string[] path) => Key([nameof(BrokerOptions.Authorization), .. path]);
}
