//! The files of one directory as listed once: their names one after another and where each
//! ends, with its stat key. A walk asked to keep them (`walk::walk_keeping`) hands them to a
//! reader that would otherwise list and stat the tree again (the task index, tasks/index.rs,
//! which lists a directory into the same shape when no walk did): no path allocated a file,
//! since a cold call holds every directory's listing at once. The walk also keeps the stat key
//! of the directory's `.context.yaml`, so the written context does not stat it again.

use crate::tree::os::Key;

#[derive(Default)]
pub struct DirFiles {
    names: String,
    files: Vec<(u32, Key)>,
    context: Option<Key>,
}

impl DirFiles {
    pub fn push(&mut self, name: &str, key: Key) {
        self.names.push_str(name);
        self.files.push((self.names.len() as u32, key));
    }

    /// The directory's context file is a regular file of this stat key.
    pub fn set_context(&mut self, key: Key) {
        self.context = Some(key);
    }

    /// The stat key of its context file, when it lists one.
    pub fn context(&self) -> Option<Key> {
        self.context
    }

    /// Each file's name and stat key, in the order they were listed.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Key)> + '_ {
        let mut start = 0;
        self.files.iter().map(move |&(end, k)| {
            let name = &self.names[start..end as usize];
            start = end as usize;
            (name, k)
        })
    }

    /// Held beside the whole index by a load: not with the room its growth left.
    pub fn shrink(&mut self) {
        self.names.shrink_to_fit();
        self.files.shrink_to_fit();
    }
}
