using System.Text.RegularExpressions;
using Broker.Core;
using Microsoft.Extensions.Configuration;

namespace Broker.Host.Configuration;

/// <summary>The options bound from a host configuration, validated.</summary>
/// <param name="Broker">The broker's options.</param>
/// <param name="Host">The executable's own options.</param>
internal sealed partial record HostSettings(BrokerOptions Broker, BrokerHostOptions Host)
{
    // nats-server's RANDOM_PORT: -1 in a port setting asks for a free port, which the socket layer calls 0.
    private const int RandomPort = -1;

    // nats-server's DEFAULT_PORT, which a client port of 0 means (setBaselineOptions).
    private const int DefaultPort = 4222;

    /// <summary>
    /// Binds the <c>Broker</c> section onto <see cref="BrokerOptions"/> and <see cref="BrokerHostOptions"/>, reads
    /// ports as nats-server does and validates: a client port of 0 is the default 4222, a monitoring port of 0 is no
    /// monitoring, and -1 is a random port for either (which <see cref="BrokerOptions"/> calls 0).
    /// </summary>
    /// <param name="configuration">The host configuration.</param>
    /// <returns>The settings.</returns>
    /// <exception cref="HostConfigurationException">A value cannot be converted, a key is unknown, or a value is out of range.</exception>
    public static HostSettings Bind(IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        var section = configuration.GetSection(HostConfiguration.BrokerSection);
        var host = new BrokerHostOptions();
        var broker = new BrokerOptions();
        try
        {
            section.Bind(host);

            // A typo in a broker setting must not be ignored silently (nats-server refuses unknown keys), so the
            // broker's keys are bound strictly, from a copy without the host's keys.
            // (A loop rather than LINQ, whose instantiations over KeyValuePair the JIT compiles at every start.)
            var brokerKeys = new List<KeyValuePair<string, string?>>();
            foreach (var setting in section.AsEnumerable(makePathsRelative: true))
            {
                if (!BrokerHostOptions.Keys.Contains(FirstSegment(setting.Key)))
                {
                    brokerKeys.Add(new(HostConfiguration.BrokerSection + ":" + setting.Key, setting.Value));
                }
            }

            new ConfigurationBuilder().AddInMemoryCollection(brokerKeys).Build()
                .GetSection(HostConfiguration.BrokerSection)
                .Bind(broker, o => o.ErrorOnUnknownConfiguration = true);
        }
        catch (InvalidOperationException ex)
        {
            throw new HostConfigurationException(Describe(ex, configuration), ex);
        }

        broker.Port = broker.Port switch
        {
            0 => DefaultPort,
            RandomPort => 0,
            var port => port,
        };
        broker.Monitoring.Port = broker.Monitoring.Port switch
        {
            0 => null,
            RandomPort => 0,
            var port => port,
        };

        // As nats-server: monitoring listens where clients do unless its own host is given (-a 127.0.0.1 -m -1 must
        // not open the monitoring port on every interface).
        if (section.GetSection(nameof(BrokerOptions.Monitoring)).GetSection(nameof(MonitoringOptions.Host)).Value is null)
        {
            broker.Monitoring.Host = broker.Host;
        }

        try
        {
            broker.Validate();
        }
        catch (InvalidOperationException ex)
        {
            throw new HostConfigurationException(ex.Message, ex);
        }

        if (broker.Monitoring.Port is < 0 or > 65535)
        {
            throw new HostConfigurationException($"http_port: {broker.Monitoring.Port} is not a valid port number");
        }

        return new HostSettings(broker, host);
    }

    private static string FirstSegment(string key)
    {
        var colon = key.IndexOf(':', StringComparison.Ordinal);
        return colon < 0 ? key : key[..colon];
    }

    // The binder's messages name types and binder options; say instead which key and value are wrong.
    private static string Describe(InvalidOperationException ex, IConfiguration configuration)
    {
        var conversion = ConversionFailure().Match(ex.Message);
        if (conversion.Success)
        {
            var key = conversion.Groups["key"].Value;
            var type = conversion.Groups["type"].Value;
            return $"{key}: invalid value \"{configuration[key]}\" (expected {type[(type.LastIndexOf('.') + 1)..]})";
        }

        var unknown = UnknownKeys().Match(ex.Message);
        if (unknown.Success)
        {
            var type = unknown.Groups["type"].Value;
            return $"unknown setting(s) {unknown.Groups["keys"].Value} (not options of {type[(type.LastIndexOf('.') + 1)..]})";
        }

        return ex.Message;
    }

    [GeneratedRegex("configuration value (?:'[^']*' )?at '(?<key>[^']+)' to type '(?<type>[^']+)'")]
    private static partial Regex ConversionFailure();

    [GeneratedRegex("not found on the instance of (?<type>[^:]+): (?<keys>.+)$")]
    private static partial Regex UnknownKeys();
}
