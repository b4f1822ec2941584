using System.Collections.Concurrent;
using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Adapters.Tls.Internal;

/// <summary>
/// The <c>"tls"</c> middleware. As a configurator it adds itself to the listeners <c>Plugins:Tls</c> secures and
/// builds each secured listener's <see cref="TlsListenerContext"/> before anything is bound, so a missing or bad
/// certificate stops the broker at startup, as nats-server. As middleware it wraps every accepted connection in a
/// <see cref="TlsConnection"/> and, unless NATS upgrades later, shakes hands at once.
/// </summary>
internal sealed class TlsMiddleware : IConnectionMiddleware, IListenerConfigurator
{
    private const string NatsProtocol = "nats";

    private readonly TlsOptionsReader settings;
    private readonly ILogger logger;
    private readonly ConcurrentDictionary<string, TlsListenerContext> contexts = new(StringComparer.Ordinal);

    public TlsMiddleware(TlsOptionsReader settings, ILoggerFactory loggerFactory)
    {
        this.settings = settings;
        logger = loggerFactory.CreateLogger("Broker.Tls");
    }

    public string Name => TlsPlugin.MiddlewareName;

    public ListenerDefinition Configure(ListenerDefinition definition)
    {
        ArgumentNullException.ThrowIfNull(definition);
        var secured = definition.Middleware.Contains(Name, StringComparer.Ordinal);
        if (!secured && settings.Options is not null && settings.Listeners.Contains(definition.Name, StringComparer.Ordinal))
        {
            // TLS wraps the raw bytes, so it runs before any other middleware.
            definition = definition with { Middleware = [Name, .. definition.Middleware] };
            secured = true;
        }

        if (secured)
        {
            var context = CreateContext(definition);
            contexts[definition.Name] = context;
            TlsLog.Enabled(logger, definition.Name, Describe(context));
        }

        return definition;
    }

    public async ValueTask<TransportConnection?> OnConnectionAsync(TransportConnection connection, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(connection);
        var definition = connection.Features.Get<ListenerDefinition>()
            ?? throw new InvalidOperationException("The TLS middleware needs the connection's ListenerDefinition feature.");
        var context = contexts.GetOrAdd(definition.Name, static (_, state) => state.Self.CreateContext(state.Definition), (Self: this, Definition: definition));
        var tls = new TlsConnection(connection, context, logger);
        if (await tls.StartAsync(cancellationToken).ConfigureAwait(false))
        {
            return tls;
        }

        await tls.DisposeAsync().ConfigureAwait(false);
        return null;
    }

    private TlsListenerContext CreateContext(ListenerDefinition definition)
    {
        TlsOptions options;
        if (definition.MiddlewareConfiguration.TryGetValue(Name, out var section))
        {
            options = TlsOptionsReader.ReadOptions(section);
        }
        else
        {
            options = settings.Options ?? throw new InvalidOperationException(
                $"Listener '{definition.Name}' uses TLS, but Plugins:{TlsPlugin.Id} has no TLS settings (cert_file, key_file) and the listener gives none.");
        }

        try
        {
            return new TlsListenerContext(definition.Name, options, string.Equals(definition.Protocol, NatsProtocol, StringComparison.Ordinal));
        }
        catch (InvalidOperationException ex)
        {
            throw new InvalidOperationException($"Listener '{definition.Name}' TLS: {ex.Message}", ex);
        }
    }

    private static string Describe(TlsListenerContext context)
    {
        var mode = context.UpgradeAfterGreeting
            ? (context.AllowPlaintext ? "available (upgrade after INFO, clear text allowed)" : "required (upgrade after INFO)")
            : context.HandshakeFirstFallback is { } fallback ? $"first, falling back to the upgrade after {fallback.TotalMilliseconds} ms" : "required (handshake first)";
        return context.Options.Verify ? mode + ", client certificates verified" + (context.Options.VerifyAndMap ? " and mapped to users" : "") : mode;
    }
}
