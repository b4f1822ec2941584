using Broker.Core.Auth;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// A user's permissions compiled once from <see cref="PermissionsOptions"/> and shared by all its connections;
/// each connection gets its own <see cref="ClientPermissions"/> from it.
/// </summary>
internal sealed partial class PermissionsTemplate
{
    public static PermissionsTemplate Compile(PermissionsOptions options) => throw new NotImplementedException();

    public ClientPermissions CreateForConnection() => throw new NotImplementedException();
}
