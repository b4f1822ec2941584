using System.Net;
using Broker.Abstractions;
using Broker.Samples.LinePlugin;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

// The id is also the name of the plugin's block in a nats-server configuration file: line { port: 7000 }.
[assembly: BrokerPlugin(typeof(LinePlugin), Id = "Line", MinimumContractVersion = "1.1")]

namespace Broker.Samples.LinePlugin;

/// <summary>
/// The plugin's startup: reads its section <c>Plugins:Line</c> (a <c>line { }</c> block in a configuration file) and
/// registers a listener, its protocol handler and a connection-limit middleware.
/// </summary>
/// <remarks>
/// Settings, read with the contract's shared reader so that they take nats-server's syntax from any source:
/// <c>host</c> (default 127.0.0.1), <c>port</c> (default 0: any free port), <c>max_connections</c> (default 100),
/// <c>max_line</c> (a size such as <c>64KB</c>; default 64 KiB), <c>idle_timeout</c> (a duration such as
/// <c>1m30s</c>; default none). Any other key, or a bad value, refuses the settings and the broker does not start.
/// </remarks>
public sealed class LinePlugin : IBrokerPlugin
{
    /// <summary>The protocol and listener name.</summary>
    public const string Protocol = "line";

    public void ConfigureServices(IServiceCollection services, PluginContext context)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(context);
        var settings = context.Configuration;
        settings.RejectUnknownKeys("host", "port", "max_connections", "max_line", "idle_timeout");
        var host = settings["host"] ?? "127.0.0.1";
        var address = IPAddress.TryParse(host, out var parsed) ? parsed : throw settings.Refuse("host", $"\"{host}\" is not an IP address");
        var port = settings.GetInt32("port", 0);
        if (port is < 0 or > 65535)
        {
            throw settings.Refuse("port", $"{port} is not a valid port number");
        }

        var maxConnections = settings.GetInt32("max_connections", 100);
        var session = new LineSessionSettings(settings.GetSize("max_line", 64 * 1024), settings.GetDuration("idle_timeout"));
        if (session.MaxLine <= 0)
        {
            throw settings.Refuse("max_line", "must be a positive size");
        }

        if (session.IdleTimeout <= TimeSpan.Zero)
        {
            throw settings.Refuse("idle_timeout", "must be positive");
        }

        services.AddSingleton(new ListenerDefinition
        {
            Name = Protocol,
            EndPoint = new IPEndPoint(address, port),
            Protocol = Protocol,
            Middleware = [ConnectionLimitMiddleware.MiddlewareName],
        });
        services.AddSingleton<IProtocolHandler>(sp => new LineProtocolHandler(
            sp.GetRequiredService<IMessageBus>(),
            session,
            sp.GetRequiredService<ILoggerFactory>().CreateLogger("Broker.Samples.Line")));
        services.AddSingleton<IConnectionMiddleware>(sp => new ConnectionLimitMiddleware(
            maxConnections,
            sp.GetRequiredService<ILoggerFactory>().CreateLogger("Broker.Samples.Line")));
    }
}

/// <summary>The settings of each line connection.</summary>
/// <param name="MaxLine">The longest line a client may send, in bytes; a longer one gets <c>ERR line too long</c>.</param>
/// <param name="IdleTimeout">How long a client may send nothing before it gets <c>ERR idle timeout</c>; none when null.</param>
public sealed record LineSessionSettings(long MaxLine, TimeSpan? IdleTimeout);
