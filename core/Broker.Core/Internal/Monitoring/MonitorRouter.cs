using Broker.Core.Internal.Monitoring.Http;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Monitoring;

/// <summary>
/// Maps request paths under the base path to endpoints, counts requests per endpoint (/varz <c>http_req_stats</c>)
/// and turns an endpoint failure into a 500. Paths match exactly, as Go's ServeMux patterns without a trailing slash
/// do: <c>/varz/</c> is not <c>/varz</c>.
/// </summary>
internal sealed class MonitorRouter
{
    /// <summary>The endpoints the index page lists, in its order.</summary>
    public static readonly (string Path, string Title)[] IndexEntries =
    [
        ("/varz", "General"),
        ("/connz", "Connections"),
        ("/accountz", "Accounts"),
        ("/accstatz", "Account Stats"),
        ("/subsz", "Subscriptions"),
        ("/healthz", "Health Probe"),
        ("/metrics", "Prometheus Metrics"),
    ];

    private readonly Dictionary<string, (string StatsKey, Func<QueryString, HttpResponse> Handler)> routes;
    private readonly List<(string Path, string Title)> pluginEntries = [];
    private readonly string basePath;
    private readonly HttpRequestStatistics statistics;
    private readonly ILogger logger;

    public MonitorRouter(MonitorEndpoints endpoints, string basePath, HttpRequestStatistics statistics, ILogger logger)
    {
        this.basePath = basePath;
        this.statistics = statistics;
        this.logger = logger;
        routes = new(StringComparer.Ordinal)
        {
            ["/"] = ("/", _ => endpoints.Root(basePath, pluginEntries)),
            ["/varz"] = ("/varz", _ => endpoints.Varz()),
            ["/connz"] = ("/connz", endpoints.Connz),
            ["/subsz"] = ("/subsz", endpoints.Subsz),
            ["/subscriptionsz"] = ("/subsz", endpoints.Subsz),
            ["/accountz"] = ("/accountz", endpoints.Accounts.Accountz),
            ["/accstatz"] = ("/accstatz", endpoints.Accounts.Accstatz),
            ["/healthz"] = ("/healthz", endpoints.Healthz),
            ["/leafz"] = ("/leafz", endpoints.Leafz),
            ["/routez"] = ("/routez", endpoints.Routez),
            ["/metrics"] = ("/metrics", _ => endpoints.Metrics()),
        };
    }

    /// <summary>The pages plugins added, for the index page after <see cref="IndexEntries"/>.</summary>
    public IReadOnlyList<(string Path, string Title)> PluginEntries => pluginEntries;

    /// <summary>Adds the pages plugins contribute (JetStream's <c>/jsz</c>); a path the broker serves itself is kept.</summary>
    public void AddEndpoints(IEnumerable<Abstractions.IMonitoringEndpoint> endpoints)
    {
        foreach (var endpoint in endpoints)
        {
            if (routes.ContainsKey(endpoint.Path))
            {
                continue;
            }

            routes[endpoint.Path] = (endpoint.Path, query =>
            {
                var answer = endpoint.Handle(query.ToDictionary());
                return new HttpResponse(answer.StatusCode, answer.ContentType, answer.Body.ToArray());
            });
            pluginEntries.Add((endpoint.Path, endpoint.Title));
        }
    }

    public HttpResponse Handle(HttpRequest request)
    {
        var response = Dispatch(request);
        MonitorLog.Request(logger, request.Method, request.Path, response.StatusCode);
        return response;
    }

    private HttpResponse Dispatch(HttpRequest request)
    {
        if (RelativePath(request.Path) is not { } path || !routes.TryGetValue(path, out var route))
        {
            return HttpResponse.NotFound();
        }

        statistics.Increment(route.StatsKey);
        if (QueryString.Parse(request.RawQuery) is not { } query)
        {
            return HttpResponse.Text(400, "invalid query string: malformed % escape");
        }

        try
        {
            return route.Handler(query);
        }
#pragma warning disable CA1031 // An endpoint fault is the broker's bug: log it as an error and answer 500, never drop the listener.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            MonitorLog.EndpointFailed(logger, path, ex);
            return HttpResponse.Text(500, "500 internal server error\n");
        }
    }

    /// <summary>The path below the base path (the base path itself is "/"), or <see langword="null"/> outside it.</summary>
    private string? RelativePath(string path)
    {
        if (basePath.Length == 0)
        {
            return path;
        }

        if (path == basePath || path == basePath + "/")
        {
            return "/";
        }

        return path.StartsWith(basePath + "/", StringComparison.Ordinal) ? path[basePath.Length..] : null;
    }
}
