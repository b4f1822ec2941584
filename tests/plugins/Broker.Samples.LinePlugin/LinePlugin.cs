using System.Globalization;
using System.Net;
using Broker.Abstractions;
using Broker.Samples.LinePlugin;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

[assembly: BrokerPlugin(typeof(LinePlugin), Id = "Line", MinimumContractVersion = "1.1")]

namespace Broker.Samples.LinePlugin;

/// <summary>
/// The plugin's startup: reads <c>Plugins:Line</c> (<c>Host</c>, default 127.0.0.1; <c>Port</c>, default 0;
/// <c>MaxConnections</c>, default 100) and registers a listener, its protocol handler and a connection-limit middleware.
/// </summary>
public sealed class LinePlugin : IBrokerPlugin
{
    /// <summary>The protocol and listener name.</summary>
    public const string Protocol = "line";

    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);
        var configuration = context.Configuration;
        var host = IPAddress.Parse(configuration["Host"] ?? "127.0.0.1");
        var port = ReadInt(configuration, "Port", 0);
        var maxConnections = ReadInt(configuration, "MaxConnections", 100);

        services.AddSingleton(new ListenerDefinition
        {
            Name = Protocol,
            EndPoint = new IPEndPoint(host, port),
            Protocol = Protocol,
            Middleware = [ConnectionLimitMiddleware.MiddlewareName],
        });
        services.AddSingleton<IProtocolHandler>(sp => new LineProtocolHandler(
            sp.GetRequiredService<IMessageBus>(),
            sp.GetRequiredService<ILoggerFactory>().CreateLogger("Broker.Samples.Line")));
        services.AddSingleton<IConnectionMiddleware>(sp => new ConnectionLimitMiddleware(
            maxConnections,
            sp.GetRequiredService<ILoggerFactory>().CreateLogger("Broker.Samples.Line")));
    }

    // Without Microsoft.Extensions.Configuration.Binder (the sample references only the contract), values are read by hand.
    private static int ReadInt(IConfiguration configuration, string key, int defaultValue)
    {
        var text = configuration[key];
        if (text is null)
        {
            return defaultValue;
        }

        return int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out var value)
            ? value
            : throw new FormatException($"Plugins:Line:{key}: \"{text}\" is not a number");
    }
}
