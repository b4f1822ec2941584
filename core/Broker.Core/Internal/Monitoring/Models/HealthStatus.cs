using System.Text.Json.Serialization;

namespace Broker.Core.Internal.Monitoring.Models;

/// <summary>The <c>/healthz</c> answer (<c>monitor.go: HealthStatus</c>), written compact like nats-server.</summary>
internal sealed class HealthStatus
{
    [JsonPropertyName("status")]
    public string Status { get; set; } = "ok";

    [JsonPropertyName("error")]
    public string? Error { get; set; }

    [JsonPropertyName("errors")]
    public IReadOnlyList<HealthzError>? Errors { get; set; }
}

/// <summary>One failed check when <c>/healthz?details=true</c>.</summary>
internal sealed class HealthzError
{
    [JsonPropertyName("type")]
    public string Type { get; set; } = "CONNECTION";

    [JsonPropertyName("error")]
    public string Error { get; set; } = "";
}
