using System.Net;
using System.Text;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Monitoring;

/// <summary>/healthz and the index page.</summary>
internal sealed partial class MonitorEndpoints
{
    /// <summary>
    /// /healthz: <c>{"status":"ok"}</c> with 200 while the broker runs and every listener accepts; otherwise 503 with
    /// <c>{"status":"error","error":...}</c> (or an <c>errors</c> list with <c>details=true</c>), as nats-server 2.9+.
    /// The JetStream options are accepted and, without JetStream, change nothing.
    /// </summary>
    public HttpResponse Healthz(QueryString query)
    {
        var reader = new QueryReader(query);
        _ = reader.Bool("js-enabled");
        _ = reader.Bool("js-enabled-only");
        _ = reader.Bool("js-server-only");
        _ = reader.Bool("js-meta-only");
        var details = reader.Bool("details");
        if (reader.Error is { } error)
        {
            return BadRequest(error);
        }

        var problem = NotReadyReason();
        if (problem is null)
        {
            return HttpResponse.Json(MonitorJson.Serialize(new HealthStatus()));
        }

        MonitorLog.HealthcheckFailed(logger, problem);
        var status = details
            ? new HealthStatus { Status = "error", Errors = [new HealthzError { Type = "CONNECTION", Error = problem }] }
            : new HealthStatus { Status = "error", Error = problem };
        return HttpResponse.Json(MonitorJson.Serialize(status), 503);
    }

    /// <summary>Why the broker is not ready for connections, or <see langword="null"/> when it is.</summary>
    internal string? NotReadyReason()
    {
        const string prefix = "failed to be ready for connections: ";
        switch (core.RunState)
        {
            case BrokerRunState.Running:
                break;
            case BrokerRunState.LameDuck:
                return prefix + "lame duck mode";
            case BrokerRunState.Stopping or BrokerRunState.Stopped:
                return prefix + "server is shutting down";
            default:
                return prefix + "server is starting";
        }

        var down = core.Listeners.Where(l => !l.IsAccepting).Select(l => l.Definition.Name).ToList();
        return down.Count == 0 ? null : prefix + string.Join(", ", down);
    }

    /// <summary>The index page: links to every endpoint under the base path, as nats-server's root page.</summary>
    public HttpResponse Root(string basePath, IEnumerable<(string Path, string Title)> pluginEntries)
    {
        var page = new StringBuilder();
        page.Append("<html lang=\"en\">\n<head><title>Broker monitoring</title></head>\n<body>\n");
        page.Append("<h1>Broker ").Append(WebUtility.HtmlEncode(BrokerServer.Version))
            .Append(" (nats-server ").Append(WebUtility.HtmlEncode(BrokerServer.CompatibleNatsServerVersion)).Append(")</h1>\n");
        page.Append("<p>Server ").Append(WebUtility.HtmlEncode(core.ServerName)).Append("</p>\n");
        foreach (var (path, title) in MonitorRouter.IndexEntries.Concat(pluginEntries))
        {
            var href = WebUtility.HtmlEncode(basePath + path);
            page.Append("<a href=\"").Append(href).Append("\">").Append(title).Append(" <code>").Append(WebUtility.HtmlEncode(path)).Append("</code></a><br/>\n");
        }

        page.Append("</body>\n</html>\n");
        return new HttpResponse(200, HttpResponse.HtmlContentType, Encoding.UTF8.GetBytes(page.ToString()));
    }
}
